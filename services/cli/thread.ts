/**
 * What the service threads of `deno task start` (ingest_thread.ts,
 * gateway_thread.ts) have in common: a module Worker started with one
 * message, answering "started" or "failed", and closed with another.
 */

export type ThreadReply =
  | { type: "started"; url: string; port: number }
  | { type: "failed"; message: string; name: string; code?: string }
  | { type: "closed" };

export interface Thread {
  worker: Worker;
  started: Extract<ThreadReply, { type: "started" }>;
  /** Sends a message and waits for the worker's next reply. */
  ask(message: unknown, transfer?: Transferable[]): Promise<ThreadReply>;
}

/** Starts `module` in a worker and sends it `start`; rejects with its failure. */
export async function startThread(
  module: string,
  name: string,
  start: unknown,
  transfer: Transferable[] = [],
): Promise<Thread> {
  const worker = new Worker(module, { type: "module", name });
  const replies: ((message: ThreadReply) => void)[] = [];
  worker.onmessage = (event: MessageEvent<ThreadReply>) => replies.shift()?.(event.data);
  const ask = (message: unknown, transfer: Transferable[] = []) =>
    new Promise<ThreadReply>((resolve) => {
      replies.push(resolve);
      worker.postMessage(message, transfer);
    });
  const started = await ask(start, transfer);
  if (started.type !== "started") {
    worker.terminate();
    const failure = started as Extract<ThreadReply, { type: "failed" }>;
    // The failure as the main thread would have seen it (a taken port keeps its code).
    throw Object.assign(new Error(failure.message), { name: failure.name, code: failure.code });
  }
  return { worker, started, ask };
}

/**
 * The worker's start: `start` on a platform it opened, which is closed again
 * when the start fails; answers the "started" reply to send.
 */
export async function startOnPlatform<T extends { url: string; port: number }>(
  platform: { close(): Promise<void> },
  start: () => Promise<T>,
): Promise<{ running: T; reply: ThreadReply }> {
  try {
    const running = await start();
    return { running, reply: { type: "started", url: running.url, port: running.port } };
  } catch (error) {
    await platform.close().catch(() => {});
    throw error;
  }
}

/** A failure as the worker sends it to the main thread. */
export function failureReply(error: unknown): ThreadReply {
  const e = error as Error & { code?: string };
  return {
    type: "failed",
    message: e?.message ?? String(error),
    name: e?.name ?? "Error",
    code: typeof e?.code === "string" ? e.code : undefined,
  };
}

/** True inside a worker: a thread module imported by the main thread never serves. */
export const inWorker =
  typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined";
