import { describe, expect, it } from "vitest";
import { compose, type RequestContext, withRequestId } from "./http.ts";
import { accessLog, requestIdHeader, SLOW_REQUEST_MS } from "./middleware.ts";
import { createLogger } from "../lib/log.ts";

const context = (requestId: string): RequestContext => ({
  request: new Request("http://gateway/x"),
  url: new URL("http://gateway/x"),
  ip: "127.0.0.1",
  requestId,
  connection: "127.0.0.1:1",
  startedAt: 0,
});

describe("requestIdHeader", () => {
  it("adds the request id to an answer made without it", async () => {
    const handler = compose([requestIdHeader], () => new Response("x"));
    const answer = await handler(context("id-1"));
    expect(answer.headers.get("x-request-id")).toBe("id-1");
  });

  it("leaves an answer made with withRequestId as it was made", async () => {
    let made: Response | undefined;
    const handler = compose([requestIdHeader], (ctx) => {
      const headers = new Headers(withRequestId(ctx, { etag: '"a"' }));
      made = new Response("x", { headers });
      // Any change to the answer's headers after it was made fails the test.
      Object.defineProperty(made, "headers", {
        value: {
          get: (name: string) => headers.get(name),
          has: (name: string) => headers.has(name),
          set: () => {
            throw new Error("headers changed after the answer was made");
          },
        },
      });
      return made;
    });
    const ctx = context("id-2");
    const answer = await handler(ctx);
    expect(answer).toBe(made);
    expect(ctx.requestIdSent).toBe(true);
    expect(answer.headers.get("x-request-id")).toBe("id-2");
  });
});

describe("withRequestId", () => {
  it("adds the id to a copy of the headers and marks the context", () => {
    const shared = Object.freeze({ etag: '"a"' });
    const ctx = context("id-3");
    expect(withRequestId(ctx, shared)).toEqual({ etag: '"a"', "x-request-id": "id-3" });
    expect(shared).toEqual({ etag: '"a"' });
    expect(ctx.requestIdSent).toBe(true);
  });
});

describe("accessLog", () => {
  const run = async (status: number, tookMs: number) => {
    const lines: string[] = [];
    const handler = compose(
      [accessLog(createLogger("info", {}, (line) => lines.push(line)))],
      () => new Response(null, { status }),
    );
    await handler({ ...context("id-4"), startedAt: performance.now() - tookMs });
    return lines.map((line) => JSON.parse(line));
  };

  it("writes nothing at info for a quick answer below 500", async () => {
    expect(await run(200, 5)).toEqual([]);
    expect(await run(404, 5)).toEqual([]);
  });

  it("warns of every 5xx and of every request slower than the bound, whatever its answer", async () => {
    expect(await run(502, 5)).toEqual([
      expect.objectContaining({ level: "warn", msg: "request", status: 502, requestId: "id-4" }),
    ]);
    const [slow] = await run(200, SLOW_REQUEST_MS + 200);
    expect(slow).toMatchObject({ level: "warn", status: 200, slow: true });
    expect(slow.ms).toBeGreaterThan(SLOW_REQUEST_MS);
  });
});
