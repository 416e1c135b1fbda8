/**
 * Connect calls between two threads of one process over a MessagePort, for a
 * service running in a Worker of the caller's process (ingest-service under
 * `deno task start`, services/cli/ingest_thread.ts).
 *
 * It is Connect's own in-memory transport (`createRouterTransport`: the
 * Connect protocol's client transport over a `UniversalClientFn` that hands
 * each request to the router's universal handlers) cut in two at the
 * `UniversalClientFn`: the caller's side posts each request (URL, headers,
 * body bytes) through the port, the worker's side hands it to the same
 * universal handlers its HTTP server serves and posts the answer back. So the
 * protocol is Connect's, unchanged: binary protobuf bodies, the
 * `connect-timeout-ms` deadline applied by the server, errors as Connect's
 * JSON error body with their code and details, the same client and server
 * interceptors. What is left out is HTTP itself: no fetch, no node:http, no
 * socket, no kernel.
 *
 * Bodies cross whole (the buffers are transferred, not copied), as over
 * HTTP/1.1: unary calls and streams that fit in memory; bidi streaming is
 * refused as over HTTP/1.1.
 */
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import {
  createAsyncIterable,
  getAbortSignalReason,
  readAllBytes,
  type UniversalClientFn,
  type UniversalClientRequest,
  type UniversalHandler,
  uResponseNotFound,
} from "@connectrpc/connect/protocol";
import { clientInterceptors } from "./interceptors.ts";
import type { TransportOptions } from "./client.ts";

/** What either side needs of a MessagePort (a test may pass a recording one). */
export interface PortLike {
  postMessage(message: unknown, transfer: Transferable[]): void;
  onmessage: ((event: MessageEvent) => void) | null;
  close(): void;
}

type Entries = [string, string][];

/** A call, or the caller giving up on one (deadline passed, call cancelled). */
type PortRequest =
  | { id: number; url: string; method: string; header: Entries; body: Uint8Array }
  | { id: number; cancel: true };

/** The answer as HTTP would carry it, or a handler that failed to produce one. */
type PortResponse =
  | { id: number; status: number; header: Entries; trailer: Entries; body: Uint8Array }
  | { id: number; failure: string };

/** Largest answer read, as the services' own server reads requests. */
const READ_MAX_BYTES = 4 * 1024 * 1024;

/** The bytes in a buffer of their own that can be transferred, copied only when shared. */
function transferable(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const whole = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 &&
    bytes.byteLength === bytes.buffer.byteLength;
  return whole ? bytes as Uint8Array<ArrayBuffer> : bytes.slice();
}

async function allBytes(body: AsyncIterable<Uint8Array> | undefined): Promise<Uint8Array> {
  if (body === undefined) return new Uint8Array(0);
  return await readAllBytes(body, Number.MAX_SAFE_INTEGER);
}

export interface PortTransport extends Transport {
  /** Fails the calls in flight with UNAVAILABLE (as a closed connection would) and closes the port. */
  close(reason?: string): void;
}

/**
 * A Connect transport whose calls go through `port` to `servePort` on its
 * other end. Options as `serviceTransport` (client.ts): the client
 * interceptors, the admin token, the default deadline.
 */
export function portTransport(port: PortLike, options: TransportOptions = {}): PortTransport {
  const pending = new Map<number, { resolve(r: PortResponse): void; reject(e: unknown): void }>();
  let nextId = 1;
  let closed: string | undefined;
  port.onmessage = (event: MessageEvent<PortResponse>) => {
    const answer = event.data;
    const call = pending.get(answer.id);
    if (!call) return; // given up on (its deadline passed), or closed
    pending.delete(answer.id);
    call.resolve(answer);
  };

  const httpClient: UniversalClientFn = async (request: UniversalClientRequest) => {
    const body = transferable(await allBytes(request.body));
    // Checked after the body is read: the call may have been given up on meanwhile.
    if (closed !== undefined) throw new ConnectError(closed, Code.Unavailable);
    const signal = request.signal;
    if (signal?.aborted) throw getAbortSignalReason(signal);
    const id = nextId++;
    const answer = await new Promise<PortResponse>((resolve, reject) => {
      const onAbort = () => {
        pending.delete(id);
        port.postMessage({ id, cancel: true } satisfies PortRequest, []);
        reject(getAbortSignalReason(signal!));
      };
      pending.set(id, {
        resolve(answer) {
          signal?.removeEventListener("abort", onAbort);
          resolve(answer);
        },
        reject(error) {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      });
      signal?.addEventListener("abort", onAbort);
      const message: PortRequest = {
        id,
        url: request.url,
        method: request.method,
        header: [...request.header],
        body,
      };
      port.postMessage(message, [body.buffer]);
    });
    if ("failure" in answer) throw new ConnectError(answer.failure, Code.Internal);
    return {
      status: answer.status,
      header: new Headers(answer.header),
      trailer: new Headers(answer.trailer),
      body: createAsyncIterable([answer.body]),
    };
  };

  const transport = createTransport({
    httpClient,
    // Only the path is read (it names the method); the host says where calls go.
    baseUrl: "http://in-process",
    useBinaryFormat: true,
    interceptors: clientInterceptors(options),
    acceptCompression: [],
    sendCompression: null,
    compressMinBytes: Number.MAX_SAFE_INTEGER,
    readMaxBytes: READ_MAX_BYTES,
    writeMaxBytes: Number.MAX_SAFE_INTEGER,
    defaultTimeoutMs: options.timeoutMs ?? 10_000,
  });
  return {
    unary: transport.unary.bind(transport),
    stream: transport.stream.bind(transport),
    close(reason = "in-process service closed") {
      if (closed !== undefined) return;
      closed = reason;
      for (const call of pending.values()) call.reject(new ConnectError(reason, Code.Unavailable));
      pending.clear();
      port.close();
    },
  };
}

/**
 * Answers the calls `portTransport` sends through `port` with `handlers` (a
 * ConnectRouter's, e.g. the ones the service's HTTP server serves). Returns a
 * function that stops answering and closes the port.
 */
export function servePort(port: PortLike, handlers: readonly UniversalHandler[]): () => void {
  const byPath = new Map(handlers.map((h) => [h.requestPath, h]));
  const inFlight = new Map<number, AbortController>();
  const answer = (response: PortResponse, transfer: Transferable[] = []) =>
    port.postMessage(response, transfer);

  async function serve(request: Extract<PortRequest, { url: string }>) {
    const aborted = new AbortController();
    inFlight.set(request.id, aborted);
    try {
      const handler = byPath.get(new URL(request.url).pathname);
      const response = handler
        ? await handler({
          httpVersion: "1.1",
          url: request.url,
          method: request.method,
          header: new Headers(request.header),
          body: createAsyncIterable([request.body]),
          signal: aborted.signal,
        })
        : uResponseNotFound;
      const body = transferable(await allBytes(response.body));
      answer({
        id: request.id,
        status: response.status,
        header: response.header ? [...response.header] : [],
        trailer: response.trailer ? [...response.trailer] : [],
        body,
      }, [body.buffer]);
    } catch (error) {
      // Connect's handlers answer errors as bodies; this is a fault below them.
      answer({ id: request.id, failure: String((error as Error)?.message ?? error) });
    } finally {
      inFlight.delete(request.id);
    }
  }

  port.onmessage = (event: MessageEvent<PortRequest>) => {
    const request = event.data;
    if ("cancel" in request) inFlight.get(request.id)?.abort(new Error("call cancelled"));
    else serve(request);
  };
  return () => {
    port.onmessage = null;
    for (const call of inFlight.values()) call.abort(new Error("service closed"));
    port.close();
  };
}
