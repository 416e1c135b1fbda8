import { describe, expect, it } from "vitest";
import { compose, type RequestContext, withRequestId } from "./http.ts";
import { requestIdHeader } from "./middleware.ts";

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
