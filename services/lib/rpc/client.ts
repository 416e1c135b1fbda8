/**
 * Clients for the internal services: the Connect protocol in binary over
 * HTTP/2 through Deno's own fetch (a native HTTP/2 client speaking h2c with
 * prior knowledge), through the shared client interceptors.
 *
 * Why not @connectrpc/connect-node: its transport drives Deno's node:http2
 * compatibility layer, a JavaScript HTTP/2 client, which crashed test
 * processes natively (SIGSEGV, SIGABRT) when a server went away mid-session.
 * The services still serve gRPC and gRPC-Web as well; only these clients
 * speak the Connect protocol, which needs no HTTP trailers and so works
 * over fetch.
 */
import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { clientInterceptors } from "./interceptors.ts";

export interface TransportOptions {
  adminToken?: string;
  /** Per-call deadline in ms unless a call sets its own. */
  timeoutMs?: number;
}

/** One HTTP/2-only client for the process: connections are pooled per origin. */
let http2Client: Deno.HttpClient | undefined;
function h2cFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  http2Client ??= Deno.createHttpClient({ http1: false, http2: true });
  return fetch(input, { ...init, client: http2Client } as RequestInit);
}

export function serviceTransport(baseUrl: string, options: TransportOptions = {}): Transport {
  return createConnectTransport({
    baseUrl,
    useBinaryFormat: true,
    fetch: h2cFetch,
    interceptors: clientInterceptors(options),
    defaultTimeoutMs: options.timeoutMs ?? 10_000,
  });
}

export function serviceClient<T extends DescService>(
  service: T,
  baseUrl: string,
  options: TransportOptions = {},
): Client<T> {
  return createClient(service, serviceTransport(baseUrl, options));
}
