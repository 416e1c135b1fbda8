/**
 * The services' front door: one TCP port for HTTP/2 (gRPC, gRPC-Web and
 * Connect from outside tools) and HTTP/1.1 (the internal Connect clients),
 * told apart by a connection's first bytes, and the two things Deno's
 * `node:http` needs to serve a connection handed to it this way. Everything
 * here leans on behaviour no runtime documents; front_door_test.ts checks
 * that behaviour itself and fails once it changes, which is when this module
 * can shrink.
 *
 * 1. Routing by the first bytes. Node's `http2.createServer` takes no
 *    `allowHTTP1` without TLS (nodejs/node#26795, closed without it), and
 *    gRPC needs HTTP/2 trailers, which `Deno.serve`'s Response cannot send.
 *    So the front door reads the first bytes, puts them back with unshift()
 *    and emits the socket on the HTTP/2 or the HTTP/1.1 server. Remove when
 *    the HTTP/2 server serves HTTP/1.1 on a cleartext port itself.
 *
 * 2. `_handle._consumed` (keepReadsInStream). An HTTP/1.1 server "consumes"
 *    a socket's handle and reads it straight into its parser (the design of
 *    nodejs/node#2355), so bytes put back with unshift() reach the parser
 *    only through a later "data" event: a request larger than the first read
 *    reached it tail first and was answered with a bare 400. A handle marked
 *    consumed is left alone and read through the stream, put-back bytes
 *    first. Remove when the HTTP/1.1 server reads unshifted bytes first by
 *    itself (the test "parses an unshifted request in order without the
 *    mark" then fails).
 *
 * 3. `listening` (keepAliveWhileOpen). Deno's `node:http` destroys a socket
 *    after each answer when its server is not listening (denoland/deno#35609;
 *    a fix is proposed in denoland/deno#35614, not in Deno 2.9.6); this
 *    server never listens itself, so without this every internal call would
 *    open a new TCP connection, and a client reusing a pooled one would race
 *    its destruction. Remove when Deno serves a second request on such a
 *    connection (the test "closes a kept-alive connection of a server that
 *    does not listen" then fails).
 */
import type * as http from "node:http";
import * as net from "node:net";

/** True when `head` opens with the HTTP/2 connection preface ("PRI * HTTP/2.0"). */
export function isHttp2Preface(head: Uint8Array): boolean {
  return head[0] === 0x50 && head[1] === 0x52 && head[2] === 0x49;
}

/** The servers a front door hands its connections to. */
export interface Doors {
  http1: http.Server;
  http2: { emit(event: "connection", socket: net.Socket): boolean };
}

export interface FrontDoor {
  server: net.Server;
  /** Destroys the connections that sent nothing yet (they hold no call). */
  dropUnrouted(): void;
}

/**
 * A TCP server that hands each connection to `doors.http2` or `doors.http1`
 * by its first three bytes, which it puts back first.
 */
export function frontDoor(doors: Doors): FrontDoor {
  const unrouted = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    unrouted.add(socket);
    socket.on("close", () => unrouted.delete(socket));
    // Answers go out at once rather than waiting for the peer's delayed ACK.
    socket.setNoDelay(true);
    let head: Uint8Array = new Uint8Array(0);
    const sniff = (chunk: Uint8Array) => {
      head = head.length === 0 ? chunk : new Uint8Array([...head, ...chunk]);
      if (head.length < 3) return;
      socket.off("data", sniff);
      unrouted.delete(socket);
      socket.pause();
      socket.unshift(head);
      if (isHttp2Preface(head)) {
        doors.http2.emit("connection", socket);
      } else {
        keepReadsInStream(socket);
        doors.http1.emit("connection", socket);
      }
      socket.resume();
    };
    socket.on("data", sniff);
    socket.on("error", () => socket.destroy());
  });
  return {
    server,
    dropUnrouted() {
      for (const socket of unrouted) socket.destroy();
    },
  };
}

/** Makes an HTTP/1.1 server read this socket through its stream, put-back bytes first (2 above). */
export function keepReadsInStream(socket: net.Socket): void {
  const handle = (socket as unknown as { _handle?: { _consumed?: boolean } })._handle;
  if (handle) handle._consumed = true;
}

/**
 * Makes `server`, which never listens itself, count as listening while
 * `open()` says so, so its connections are kept alive between answers (3 above).
 */
export function keepAliveWhileOpen(server: http.Server, open: () => boolean): void {
  Object.defineProperty(server, "listening", { get: open });
}
