/**
 * The HTTP fuzzer of `deno task bench fuzz`, small: 2,000 generated and
 * mutated requests at `deno task start` with its demo site. No answer 500,
 * every error of a public route a JSON body with a message, every request
 * answered (but an upload cut off), and the system healthy afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fuzzHttp, type FuzzTarget, startFuzzTarget } from "../bench/fuzz.ts";

describe("HTTP fuzzing", () => {
  let target: FuzzTarget;

  beforeAll(async () => {
    target = await startFuzzTarget();
  }, 120_000);
  afterAll(async () => {
    await target?.stop();
  });

  it(
    "answers 2,000 generated requests without a 500 or a non-JSON error and stays healthy",
    async () => {
      const seed = Number(Deno.env.get("FUZZ_SEED") ?? Date.now() % 100_000);
      const result = await fuzzHttp({ url: target.url, keys: target.keys, count: 2_000, seed });
      console.log(
        `[fuzz http] seed ${seed}: answers ${JSON.stringify(result.byStatus)}, ` +
          `modes ${JSON.stringify(result.byMode)}`,
      );
      expect(result.sent).toBe(2_000);
      expect(result.problems, JSON.stringify(result.findings.slice(0, 5), null, 2)).toEqual({});
      // The generator reaches past the key checks, not only refusals.
      expect(result.byStatus[200]).toBeGreaterThan(100);
      const health = await fetch(`${target.url}/healthz`);
      expect(health.status).toBe(200);
      await health.body?.cancel();
      const read = await fetch(`${target.url}/content/v1/pages/home`, {
        headers: { "x-crm-key": target.keys.siteKey },
      });
      expect(read.status).toBe(200);
      await read.body?.cancel();
    },
    120_000,
  );
});
