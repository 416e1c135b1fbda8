import { describe, expect, it } from "vitest";
import { acceptRequestId, currentRequestId, inRequest, outsideRequest } from "./request_scope.ts";

describe("request scope", () => {
  it("keeps a caller's well-formed request id", () => {
    expect(acceptRequestId("req-42.a:b_C")).toBe("req-42.a:b_C");
  });

  it("replaces a missing, too long or unsafe id with a new UUID", () => {
    const uuid = /^[0-9a-f-]{36}$/;
    expect(acceptRequestId(null)).toMatch(uuid);
    expect(acceptRequestId("")).toMatch(uuid);
    expect(acceptRequestId("x".repeat(129))).toMatch(uuid);
    expect(acceptRequestId("a b")).toMatch(uuid);
    expect(acceptRequestId('id"\n{')).toMatch(uuid);
  });

  it("carries the id through awaits and drops it outside a request", async () => {
    expect(currentRequestId()).toBeUndefined();
    await inRequest("r1", async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      expect(currentRequestId()).toBe("r1");
      outsideRequest(() => expect(currentRequestId()).toBeUndefined());
      await inRequest("r2", () => expect(currentRequestId()).toBe("r2"));
      expect(currentRequestId()).toBe("r1");
    });
  });
});
