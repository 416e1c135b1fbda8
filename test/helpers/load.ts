/** Load for the crash tests: server events with ids from many concurrent senders. */
import type { TestSystem } from "./system.ts";
import { postEvent } from "./marketing.ts";

export interface EventLoad {
  /** Every id sent, answered or not. */
  sent: string[];
  /** The ids answered 200 with ok: what the system promised to keep. */
  acked: string[];
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<void>;
}

/** Sends `note` events with ids `${run}-0`, `${run}-1`, ... until stopped (or `most` are sent). */
export function eventLoad(target: TestSystem, run: string, senders = 32, most = 20_000): EventLoad {
  const sent: string[] = [];
  const acked: string[] = [];
  let next = 0;
  let stopped = false;
  const sender = async () => {
    while (!stopped && next < most) {
      const n = next++;
      const id = `${run}-${n}`;
      sent.push(id);
      try {
        const res = await postEvent(target, { name: "note", id, p: { n } });
        if (res.status === 200 && (await res.json()).ok === true) acked.push(id);
        else await res.body?.cancel();
      } catch { /* refused while the system is down */ }
    }
  };
  const done = Promise.all(Array.from({ length: senders }, sender));
  return {
    sent,
    acked,
    async stop() {
      stopped = true;
      await done;
    },
  };
}
