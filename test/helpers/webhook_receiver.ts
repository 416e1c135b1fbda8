/**
 * A webhook receiver on the loopback for the integration tests: it keeps
 * every delivery, checks each one's signature with the independent
 * `standardwebhooks` package (the Standard Webhooks reference library), and
 * answers what the test tells it to (2xx unless told to fail).
 */
import { Webhook } from "standardwebhooks";

export interface Delivery {
  id: string;
  timestamp: number;
  type: string;
  // deno-lint-ignore no-explicit-any
  body: Record<string, any>;
  raw: string;
  path: string;
  /** What the receiver answered. */
  status: number;
  /** The independent verifier accepted the signature. */
  verified: boolean;
  verifyError?: string;
  /** performance.now() when it arrived. */
  arrivedAt: number;
  /** Date.now() when it arrived, to compare with the body's timestamp. */
  arrivedAtMs: number;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** The next n deliveries are answered with this status instead of 204. */
  failNext(n: number, status?: number): void;
  /** Waits (real time, polling) until `count` deliveries match; throws after timeoutMs. */
  waitFor(match: (d: Delivery) => boolean, count?: number, timeoutMs?: number): Promise<Delivery[]>;
  of(type: string): Delivery[];
  close(): Promise<void>;
}

/** `listen`: where to listen (the loopback on a free port unless given). */
export function startReceiver(
  secret: string,
  listen: { hostname: string; port: number } = { hostname: "127.0.0.1", port: 0 },
): Receiver {
  const deliveries: Delivery[] = [];
  let failing = 0;
  let failStatus = 500;
  const verifier = new Webhook(secret);
  const server = Deno.serve({ ...listen, onListen() {} }, async (req) => {
    const raw = await req.text();
    const headers = Object.fromEntries(req.headers);
    let verified = true;
    let verifyError: string | undefined;
    try {
      verifier.verify(raw, headers);
    } catch (error) {
      verified = false;
      verifyError = String(error);
    }
    const status = failing > 0 ? failStatus : 204;
    if (failing > 0) failing--;
    const body = JSON.parse(raw);
    deliveries.push({
      id: headers["webhook-id"],
      timestamp: Number(headers["webhook-timestamp"]),
      type: body.type,
      body,
      raw,
      path: new URL(req.url).pathname,
      status,
      verified,
      verifyError,
      arrivedAt: performance.now(),
      arrivedAtMs: Date.now(),
    });
    return new Response(status === 204 ? null : "not now", { status });
  });
  const receiver: Receiver = {
    url: `http://${listen.hostname}:${server.addr.port}`,
    deliveries,
    failNext(n, status = 500) {
      failing = n;
      failStatus = status;
    },
    async waitFor(match, count = 1, timeoutMs = 20_000) {
      const started = performance.now();
      for (;;) {
        const found = deliveries.filter(match);
        if (found.length >= count) return found;
        if (performance.now() - started > timeoutMs) {
          throw new Error(
            `${found.length} of ${count} deliveries after ${timeoutMs} ms; received: ` +
              JSON.stringify(deliveries.map((d) => [d.type, d.status, d.id])),
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    of: (type) => deliveries.filter((d) => d.type === type),
    close: () => server.shutdown(),
  };
  return receiver;
}
