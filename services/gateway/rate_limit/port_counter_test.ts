import { afterEach, describe, expect, it } from "vitest";
import { LocalCounter, WINDOW_MS } from "./counter.ts";
import { PortCounter, serveCounter } from "./port_counter.ts";
import { ManualClock } from "../../lib/clock.ts";
import type { PortLike } from "../../lib/rpc/port_transport.ts";

/** The worker's end of the channel, counting the messages it sends. */
function recording(port: MessagePort): PortLike & { sent: unknown[] } {
  const sent: unknown[] = [];
  return {
    sent,
    postMessage(message, transfer) {
      sent.push(message);
      port.postMessage(message, transfer);
    },
    get onmessage() {
      return port.onmessage;
    },
    set onmessage(handler) {
      port.onmessage = handler;
    },
    close: () => port.close(),
  };
}

describe("PortCounter", () => {
  const stops: (() => void)[] = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  function setUp() {
    const clock = new ManualClock(7 * WINDOW_MS + 5);
    const shared = new LocalCounter();
    const channel = new MessageChannel();
    const workerEnd = recording(channel.port1);
    const remote = new PortCounter(workerEnd);
    stops.push(serveCounter(channel.port2, shared, clock), () => remote.close());
    return { clock, shared, remote, sent: workerEnd.sent };
  }

  it("adds a worker's hits to the main thread's counter, so both threads see one count", async () => {
    const { clock, shared, remote } = setUp();
    const now = clock.now();
    expect(await shared.hit([{ name: "m:site:a", by: 1 }], now)).toEqual([1]);
    expect(await remote.hit([{ name: "m:site:a", by: 1 }, { name: "m:ip:x", by: 1 }], now))
      .toEqual([2, 1]);
    expect(await shared.hit([{ name: "m:site:a", by: 1 }], now)).toEqual([3]);
    expect(await remote.hit([{ name: "m:site:a", by: 0 }], now)).toEqual([3]);
  });

  it("sends the hits of one turn in one message and answers each call its own values", async () => {
    const { clock, remote, sent } = setUp();
    const calls = [1, 2, 3].map((by) => remote.hit([{ name: "k", by }], clock.now()));
    expect(await Promise.all(calls)).toEqual([[1], [3], [6]]);
    expect(sent).toHaveLength(1);
    expect(await remote.hit([{ name: "k", by: 1 }], clock.now())).toEqual([7]);
    expect(sent).toHaveLength(2);
  });

  it("takes the window from the main thread's clock, not the worker's", async () => {
    const { clock, remote } = setUp();
    expect(await remote.hit([{ name: "k", by: 1 }], clock.now())).toEqual([1]);
    // A worker whose own clock lags still counts in the main thread's minute.
    clock.advance(WINDOW_MS);
    expect(await remote.hit([{ name: "k", by: 1 }], clock.now() - WINDOW_MS)).toEqual([1]);
  });

  it("fails the hits still waiting when it closes", async () => {
    const { clock, remote } = setUp();
    const waiting = remote.hit([{ name: "k", by: 1 }], clock.now());
    remote.close();
    await expect(waiting).rejects.toThrow("closed");
    await expect(remote.hit([{ name: "k", by: 1 }], clock.now())).rejects.toThrow("closed");
  });
});
