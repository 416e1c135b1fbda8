import { describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { httpErrorOf } from "./rpc_errors.ts";
import { publicError } from "../lib/errors.ts";

describe("httpErrorOf", () => {
  it("gives a service's refusal its status and public fields", () => {
    const failure = httpErrorOf(publicError(Code.NotFound, "post_not_found"));
    expect(failure).toEqual({
      status: 404,
      body: { message: "post_not_found" },
      serverSide: false,
    });
  });

  it("tells an unavailable or slow service from a failing one", () => {
    expect(httpErrorOf(new ConnectError("down", Code.Unavailable)).status).toBe(503);
    expect(httpErrorOf(new ConnectError("slow", Code.DeadlineExceeded)).status).toBe(504);
    expect(httpErrorOf(new ConnectError("bug", Code.Internal))).toEqual({
      status: 502,
      body: { message: "upstream_error" },
      serverSide: true,
    });
  });

  it("calls the gateway's own exceptions internal errors, not a service's", () => {
    expect(httpErrorOf(new TypeError("oops"))).toEqual({
      status: 500,
      body: { message: "internal_error" },
      serverSide: true,
    });
  });
});
