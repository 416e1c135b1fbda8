/**
 * The rollups' builder's staleness (rollup_builder.ts): counted from its
 * start until a round goes through every site, then from that round's start;
 * a failed round leaves it growing.
 */
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../lib/clock.ts";
import { createLogger } from "../../lib/log.ts";
import type { Database } from "../../lib/db/mod.ts";
import { RollupBuilder } from "./rollup_builder.ts";

const HOUR = 3_600_000;

/** Storage with no sites, or one that refuses every statement. */
function storage(failing: () => boolean): Database {
  const query = () => failing() ? Promise.reject(new Error("storage away")) : Promise.resolve([]);
  return {
    query,
    exec: query,
    transaction: (fn: (tx: unknown) => unknown) => fn({ query }),
  } as unknown as Database;
}

describe("the rollups' builder", () => {
  it("is stale from its start until a round ends, and again when rounds fail", async () => {
    const clock = new ManualClock(Date.UTC(2026, 4, 1));
    let failing = true;
    const warnings: string[] = [];
    const log = createLogger("warn", {}, (line) => warnings.push(line));
    const builder = new RollupBuilder({ db: storage(() => failing), clock, log });
    try {
      clock.advance(2 * HOUR);
      await builder.round();
      expect(warnings.join()).toContain("storage away");
      expect(builder.stalenessS(clock.now())).toBe(2 * 3600);
      failing = false;
      await builder.round();
      clock.advance(HOUR);
      expect(builder.stalenessS(clock.now())).toBe(3600);
      failing = true;
      clock.advance(HOUR);
      await builder.round();
      expect(builder.stalenessS(clock.now())).toBe(2 * 3600);
    } finally {
      await builder.close();
    }
  });
});
