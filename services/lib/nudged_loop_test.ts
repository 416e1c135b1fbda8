import { describe, expect, it } from "vitest";
import { NudgedLoop } from "./nudged_loop.ts";

/** A pass that ends only when the test lets it. */
function heldPasses() {
  const ends: (() => void)[] = [];
  const pass = () => new Promise<void>((resolve) => ends.push(resolve));
  return { ends, pass };
}
const turn = () => new Promise((r) => setTimeout(r, 0));
const NEVER = 3_600_000;

describe("NudgedLoop", () => {
  it("runs one pass at a time: nudges during a pass make exactly one more", async () => {
    const held = heldPasses();
    const loop = new NudgedLoop(held.pass, () => NEVER);
    try {
      loop.nudge();
      loop.nudge();
      loop.nudge();
      expect(held.ends).toHaveLength(1);
      held.ends[0]();
      await turn();
      expect(held.ends).toHaveLength(2);
      held.ends[1]();
      await turn();
      expect(held.ends).toHaveLength(2);
    } finally {
      await loop.close();
    }
  });

  it("runs again after a pass that asked for it", async () => {
    const held = heldPasses();
    const loop = new NudgedLoop(held.pass, () => NEVER);
    try {
      loop.nudge();
      loop.again();
      held.ends[0]();
      await turn();
      expect(held.ends).toHaveLength(2);
    } finally {
      held.ends[1]?.();
      await loop.close();
    }
  });

  it("runs the next pass by itself after the delay a pass leaves", async () => {
    const held = heldPasses();
    const loop = new NudgedLoop(held.pass, () => 1);
    try {
      loop.nudge();
      held.ends[0]();
      await new Promise((r) => setTimeout(r, 20));
      expect(held.ends.length).toBeGreaterThanOrEqual(2);
    } finally {
      for (const end of held.ends) end();
      await loop.close();
    }
  });

  it("waits for the pass under way on close, and runs none after", async () => {
    const held = heldPasses();
    const loop = new NudgedLoop(held.pass, () => 1);
    loop.nudge();
    let closed = false;
    const closing = loop.close().then(() => (closed = true));
    await turn();
    expect(closed).toBe(false);
    held.ends[0]();
    await closing;
    loop.nudge();
    await new Promise((r) => setTimeout(r, 10));
    expect(held.ends).toHaveLength(1);
  });
});
