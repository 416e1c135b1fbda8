/**
 * Clients for the internal services: the Connect protocol in binary over one
 * HTTP/2 connection per target, through the shared client interceptors.
 */
import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { clientInterceptors } from "./interceptors.ts";

export interface TransportOptions {
  adminToken?: string;
  /** Per-call deadline in ms unless a call sets its own. */
  timeoutMs?: number;
}

export function serviceTransport(baseUrl: string, options: TransportOptions = {}): Transport {
  return createConnectTransport({
    baseUrl,
    httpVersion: "2",
    useBinaryFormat: true,
    interceptors: clientInterceptors(options),
    defaultTimeoutMs: options.timeoutMs ?? 10_000,
    // Keep the connection alive across quiet spells and notice a dead peer.
    idleConnectionTimeoutMs: 5 * 60_000,
    pingIntervalMs: 30_000,
  });
}

export function serviceClient<T extends DescService>(
  service: T,
  baseUrl: string,
  options: TransportOptions = {},
): Client<T> {
  return createClient(service, serviceTransport(baseUrl, options));
}
