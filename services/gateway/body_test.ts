import { describe, expect, it } from "vitest";
import { BodyTimeoutError, BodyTooLargeError, readLimitedText } from "./body.ts";

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

describe("readLimitedText's time limit", () => {
  function stalled() {
    const state = { cancelled: false };
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("{"));
      },
      cancel() {
        state.cancelled = true;
      },
    });
    return { body, state };
  }

  it("refuses a streamed body that stalls, and stops reading it", async () => {
    const { body, state } = stalled();
    const request = new Request("http://x/", { method: "POST", body });
    const started = performance.now();
    await expect(readLimitedText(request, 8192, 50)).rejects.toBeInstanceOf(BodyTimeoutError);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(state.cancelled).toBe(true);
  });

  it("refuses a body of declared length that stalls", async () => {
    const { body } = stalled();
    const request = new Request("http://x/", {
      method: "POST",
      body,
      headers: { "content-length": "10" },
    });
    const started = performance.now();
    await expect(readLimitedText(request, 8192, 50)).rejects.toBeInstanceOf(BodyTimeoutError);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("refuses stalled bodies each at its own deadline, while others read on", async () => {
    const first = stalled();
    const second = stalled();
    const started = performance.now();
    const firstRead = readLimitedText(
      new Request("http://x/", { method: "POST", ...first }),
      8192,
      80,
    );
    await new Promise((resolve) => setTimeout(resolve, 40));
    const secondRead = readLimitedText(
      new Request("http://x/", { method: "POST", ...second }),
      8192,
      80,
    );
    // A body that arrives between the two deadlines is read whole.
    expect(await readLimitedText(post("between"), 100, 80)).toBe("between");
    await expect(firstRead).rejects.toBeInstanceOf(BodyTimeoutError);
    const firstRefused = performance.now() - started;
    expect(second.state.cancelled).toBe(false);
    await expect(secondRead).rejects.toBeInstanceOf(BodyTimeoutError);
    const secondRefused = performance.now() - started;
    expect(firstRefused).toBeGreaterThanOrEqual(80);
    expect(secondRefused).toBeGreaterThanOrEqual(120);
    expect(first.state.cancelled && second.state.cancelled).toBe(true);
  });

  it("reads a body that arrives within the time", async () => {
    expect(await readLimitedText(post("quick"), 100, 1000)).toBe("quick");
  });
});

describe("readLimitedText with a declared length", () => {
  it("reads a body of declared length", async () => {
    const body = JSON.stringify({ a: "ü".repeat(10) });
    const request = new Request("http://x/", {
      method: "POST",
      body,
      headers: { "content-length": String(new TextEncoder().encode(body).length) },
    });
    expect(await readLimitedText(request, 8192)).toBe(body);
  });
});
