/**
 * A minimal HTTP/1.1 keep-alive client for load generation: one request at a
 * time per connection, written and read as bytes. fetch() costs more CPU per
 * request than the server under test on this machine, which would measure
 * the client instead of the server.
 */

export interface Answer {
  status: number;
  body: string;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const HEADER_END = [13, 10, 13, 10];

function indexOfHeaderEnd(buffer: Uint8Array, length: number): number {
  for (let i = 0; i + 3 < length; i++) {
    if (
      buffer[i] === HEADER_END[0] && buffer[i + 1] === HEADER_END[1] &&
      buffer[i + 2] === HEADER_END[2] && buffer[i + 3] === HEADER_END[3]
    ) return i;
  }
  return -1;
}

/** Where a chunked body that starts at `from` ends (just past its last chunk), or -1. */
function indexOfLastChunk(buffer: Uint8Array, from: number, length: number): number {
  let at = from;
  while (at < length) {
    const lineEnd = buffer.indexOf(10, at);
    if (lineEnd < 0 || lineEnd >= length) return -1;
    const size = parseInt(decoder.decode(buffer.subarray(at, lineEnd)).trim(), 16);
    if (size === 0) {
      return length - lineEnd - 1 >= 2 ? lineEnd + 1 + 2 : -1;
    }
    if (Number.isNaN(size)) throw new Error("malformed chunked body");
    at = lineEnd + 1 + size + 2;
  }
  return -1;
}

export class HttpConnection {
  #conn: Deno.TcpConn;
  #buffer = new Uint8Array(64 * 1024);
  #length = 0;
  #host: string;

  private constructor(conn: Deno.TcpConn, host: string) {
    this.#conn = conn;
    this.#host = host;
  }

  static async open(url: string): Promise<HttpConnection> {
    const u = new URL(url);
    const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
    conn.setNoDelay(true);
    return new HttpConnection(conn, u.host);
  }

  post(path: string, headers: Record<string, string>, body: string): Promise<Answer> {
    return this.send("POST", path, headers, body);
  }

  get(path: string, headers: Record<string, string>): Promise<Answer> {
    return this.send("GET", path, headers, "");
  }

  async send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<Answer> {
    const payload = encoder.encode(body);
    let head =
      `${method} ${path} HTTP/1.1\r\nhost: ${this.#host}\r\ncontent-length: ${payload.length}\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    const headBytes = encoder.encode(head + "\r\n");
    const request = new Uint8Array(headBytes.length + payload.length);
    request.set(headBytes);
    request.set(payload, headBytes.length);
    let written = 0;
    while (written < request.length) written += await this.#conn.write(request.subarray(written));
    return await this.#readAnswer();
  }

  async #fill(): Promise<void> {
    if (this.#length === this.#buffer.length) {
      const bigger = new Uint8Array(this.#buffer.length * 2);
      bigger.set(this.#buffer);
      this.#buffer = bigger;
    }
    const n = await this.#conn.read(this.#buffer.subarray(this.#length));
    if (n === null) throw new Error("connection closed");
    this.#length += n;
  }

  async #readAnswer(): Promise<Answer> {
    let end: number;
    while ((end = indexOfHeaderEnd(this.#buffer, this.#length)) < 0) await this.#fill();
    const head = decoder.decode(this.#buffer.subarray(0, end));
    const status = Number(head.slice(9, 12));
    const match = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let total = end + 4 + (match ? Number(match[1]) : 0);
    if (!match && /\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      // A chunked body ends with a chunk of size 0; its bytes are kept as they came.
      let last: number;
      while ((last = indexOfLastChunk(this.#buffer, end + 4, this.#length)) < 0) await this.#fill();
      total = last;
    }
    while (this.#length < total) await this.#fill();
    const body = decoder.decode(this.#buffer.subarray(end + 4, total));
    this.#buffer.copyWithin(0, total, this.#length);
    this.#length -= total;
    return { status, body };
  }

  close() {
    try {
      this.#conn.close();
    } catch { /* already closed */ }
  }
}
