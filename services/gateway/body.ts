/**
 * Reading a request body with a size limit and a time limit: a declared
 * Content-Length over the limit is refused before reading, a body that turns
 * out larger while streaming is refused as soon as it crosses the limit, and
 * a body that does not arrive in time (a slow or stalled upload holding a
 * request open) is refused when the time is up.
 */
import { DEFAULT_BODY_TIMEOUT_MS } from "../lib/config.ts";

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
  }
}

export class BodyTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`request body not received within ${timeoutMs} ms`);
  }
}

/**
 * The answer to a body that did not arrive in time, through the route's own
 * error function (its CORS headers): 408 with `Connection: close`, so the
 * client sends no further request on a connection whose upload was cut off.
 * (Deno does not close the socket itself: measured, it stays open until the
 * client closes it, holding no request slot.)
 */
export function bodyTimeout(
  error: (status: number, body: { message: string }) => Response,
): Response {
  const response = error(408, { message: "request_timeout" });
  response.headers.set("connection", "close");
  return response;
}

export async function readLimitedText(
  request: Request,
  limit: number,
  timeoutMs: number = DEFAULT_BODY_TIMEOUT_MS,
): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLargeError(limit);
  if (!request.body) return "";
  // The upload's duration is wall time on the wire, not business time, so a
  // real timer measures it (the injected clock would stand still in tests).
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BodyTimeoutError(timeoutMs)), timeoutMs);
  });
  if (Number.isFinite(declared)) {
    // A declared length is enforced by the HTTP server, so the native read is
    // safe and cheaper. After a time-out it cannot be cancelled, but it holds
    // at most the declared length, which is within the limit.
    const text = request.text();
    text.catch(() => {}); // a read left behind by a time-out fails unobserved
    try {
      return await Promise.race([text, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
  const reader = request.body.getReader();
  try {
    return await Promise.race([readAll(reader, limit), timedOut]);
  } catch (error) {
    // Stops the upload, so the connection is not kept busy by it.
    await reader.cancel().catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

async function readAll(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  limit: number,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) throw new BodyTooLargeError(limit);
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** The value of a JSON text, or undefined when the text is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
