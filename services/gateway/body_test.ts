import { describe, expect, it } from "vitest";
import { BodyTooLargeError, readLimitedText } from "./body.ts";

const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request("http://x/", { method: "POST", body, headers });

function stream(parts: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const p of parts) controller.enqueue(encoder.encode(p));
      controller.close();
    },
  });
}

describe("readLimitedText", () => {
  it("reads a body up to the limit, exactly at the limit included", async () => {
    expect(await readLimitedText(post("héllo"), 100)).toBe("héllo");
    expect(await readLimitedText(post("x".repeat(8192)), 8192)).toHaveLength(8192);
  });

  it("refuses a larger declared length before reading", async () => {
    await expect(readLimitedText(post("x", { "content-length": "9000" }), 8192)).rejects
      .toBeInstanceOf(BodyTooLargeError);
  });

  it("refuses a streamed body as soon as it crosses the limit", async () => {
    const request = new Request("http://x/", {
      method: "POST",
      body: stream(["x".repeat(5000), "y".repeat(5000)]),
    });
    await expect(readLimitedText(request, 8192)).rejects.toBeInstanceOf(BodyTooLargeError);
  });
});

describe("readLimitedText with a declared length", () => {
  it("reads the body natively", async () => {
    const body = JSON.stringify({ a: "ü".repeat(10) });
    const request = new Request("http://x/", {
      method: "POST",
      body,
      headers: { "content-length": String(new TextEncoder().encode(body).length) },
    });
    expect(await readLimitedText(request, 8192)).toBe(body);
  });
});
