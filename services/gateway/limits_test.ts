import { describe, expect, it } from "vitest";
import { headRefusal, InFlight, requestLimits } from "./limits.ts";
import { compose, jsonError, type RequestContext } from "./http.ts";
import { accessLog } from "./middleware.ts";
import { createLogger } from "../lib/log.ts";

const LIMITS = { maxHeaders: 3, maxHeaderBytes: 40, maxUrlBytes: 20 };

function refusal(path: string, headers: Record<string, string> = {}) {
  const request = new Request(`http://h${path}`, { headers });
  return headRefusal(request, new URL(request.url), LIMITS);
}

describe("headRefusal", () => {
  it("lets a head within every bound through, at the bounds included", () => {
    expect(refusal("/" + "a".repeat(19))).toBeUndefined();
    expect(refusal("/", { a: "1", b: "2", c: "x".repeat(35) })).toBeUndefined();
  });

  it("refuses a path and query over maxUrlBytes with 414, counting encoded bytes", async () => {
    const answer = refusal("/" + "a".repeat(20))!;
    expect(answer.status).toBe(414);
    expect(await answer.json()).toEqual({ message: "url_too_long", limit: 20 });
    // Seven characters, 21 bytes once percent-encoded.
    expect(refusal("/ééééééé")?.status).toBe(414);
    expect(refusal("/?q=" + "a".repeat(17))?.status).toBe(414);
  });

  it("refuses more fields than maxHeaders, or more bytes than maxHeaderBytes, with 431", async () => {
    const many = refusal("/", { a: "1", b: "2", c: "3", d: "4" })!;
    expect(many.status).toBe(431);
    expect((await many.json()).message).toBe("headers_too_large");
    expect(refusal("/", { a: "x".repeat(40) })?.status).toBe(431);
  });
});

describe("InFlight", () => {
  it("bounds requests in total and per connection, and gives places back", () => {
    const inFlight = new InFlight({ maxInFlight: 3, maxInFlightPerConnection: 2 });
    expect(inFlight.enter("a")).toBe(true);
    expect(inFlight.enter("a")).toBe(true);
    expect(inFlight.enter("a")).toBe(false); // a's own bound
    expect(inFlight.enter("b")).toBe(true);
    expect(inFlight.enter("c")).toBe(false); // the total bound
    expect(inFlight.total).toBe(3);
    inFlight.leave("a");
    expect(inFlight.enter("c")).toBe(true);
    expect(inFlight.enter("a")).toBe(false);
    inFlight.leave("a");
    inFlight.leave("b");
    inFlight.leave("c");
    expect(inFlight.total).toBe(0);
    expect(inFlight.enter("a")).toBe(true);
    expect(inFlight.enter("a")).toBe(true);
  });
});

describe("requestLimits in the chain", () => {
  it("refuses beyond the bound with 503 overloaded, logged at debug only, not as a failure", async () => {
    const lines: string[] = [];
    const log = createLogger("info", {}, (line) => lines.push(line));
    let release = () => {};
    let held = new Promise<void>((resolve) => release = resolve);
    const limits = {
      maxHeaders: 100,
      maxHeaderBytes: 16384,
      maxUrlBytes: 8192,
      bodyTimeoutMs: 1000,
      maxInFlight: 1,
      maxInFlightPerConnection: 1,
    };
    const handler = compose([accessLog(log), requestLimits(limits)], async (ctx) => {
      if (ctx.url.pathname === "/hold") await held;
      return jsonError(503, { message: "service_unavailable" });
    });
    const ctx = (path: string, connection: string): RequestContext => ({
      request: new Request(`http://h${path}`),
      url: new URL(`http://h${path}`),
      ip: "203.0.113.9",
      requestId: "r",
      connection,
      startedAt: performance.now(),
    });
    const first = handler(ctx("/hold", "a"));
    const refused = await handler(ctx("/x", "b"));
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ message: "overloaded" });
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(lines).toEqual([]); // no warning per refusal
    release();
    expect((await first).status).toBe(503);
    // A 503 of the service behind is a failure, and is logged as one.
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: "warn", status: 503, ip: "203.0.113.0" });
    // The probes pass the bound while it is full: they reach the handler,
    // which answers every path but /hold with a 503 of its own.
    held = new Promise<void>((resolve) => release = resolve);
    const holding = handler(ctx("/hold", "a"));
    expect(await (await handler(ctx("/x", "b"))).json()).toEqual({ message: "overloaded" });
    for (const probe of ["/livez", "/healthz"]) {
      expect(await (await handler(ctx(probe, "b"))).json()).toEqual({
        message: "service_unavailable",
      });
    }
    release();
    await holding;
  });
});
