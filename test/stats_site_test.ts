/**
 * GET /stats/v1/site: the site's zone and declared event types for a reader
 * of its reports (the dashboard), behind the report key and its limit like
 * the query.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { reportKeyOf, statsSite } from "./helpers/stats.ts";
import { ManualClock } from "../services/lib/clock.ts";
import { SYSTEM_STORAGES } from "./helpers/env.ts";

describe.each(SYSTEM_STORAGES)("on %s", (storage) => {
  const SITE = "decl";

  describe("the site's declarations for its reports", () => {
    let sys: TestSystem;
    // deno-lint-ignore no-explicit-any
    let manifest: any;
    const site = (init: RequestInit = {}, key: string | null = reportKeyOf(SITE)) =>
      fetch(`${sys.url}/stats/v1/site`, {
        ...init,
        headers: { ...(key === null ? {} : { "x-report-key": key }), ...init.headers },
      });

    beforeAll(async () => {
      manifest = await statsSite(SITE, "Europe/Vienna");
      sys = await startTestSystem({
        storage,
        seed: manifest,
        // A clock that stands still: the limit's one-minute window cannot turn during the test.
        clock: new ManualClock(Date.UTC(2026, 4, 1, 12)),
        env: { RATE_LIMIT_STATS_PER_KEY: "3" },
      });
    });
    afterAll(async () => {
      await sys?.close();
    });

    it("answers the zone and every declared event type with its parameters, in manifest order", async () => {
      const response = await site();
      expect(response.status).toBe(200);
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(response.headers.get("cache-control")).toBe("no-store");
      const body = await response.json();
      expect(body.siteId).toBe(SITE);
      expect(body.timeZone).toBe("Europe/Vienna");
      expect(body.eventTypes.map((t: { name: string }) => t.name)).toEqual(
        // deno-lint-ignore no-explicit-any
        manifest.eventTypes.map((t: any) => t.name),
      );
      // deno-lint-ignore no-explicit-any
      const declared = (name: string) => manifest.eventTypes.find((t: any) => t.name === name);
      const purchase = body.eventTypes.find((t: { name: string }) => t.name === "purchase");
      expect(purchase).toEqual({
        name: "purchase",
        title: "purchase", // declared without a title: titled by its name
        status: "active",
        params: declared("purchase").params,
        bringsRevenue: true,
        currency: "USD",
      });
      const note = body.eventTypes.find((t: { name: string }) => t.name === "note");
      expect(note.params).toEqual(declared("note").params);
      expect(note.bringsRevenue).toBe(false);
      expect(note.currency).toBeNull();
      const old = body.eventTypes.find((t: { name: string }) => t.name === "old_type");
      expect(old.status).toBe("archived");
    });

    it("refuses a missing or wrong key, other methods, and counts against the key's limit", async () => {
      expect((await site({}, null)).status).toBe(401);
      expect(await (await site({}, `rk_${"0".repeat(48)}`)).json()).toEqual({
        message: "invalid_key",
      });
      const post = await site({ method: "POST", body: "{}" });
      expect(post.status).toBe(405);
      expect(post.headers.get("allow")).toBe("GET, OPTIONS");
      await post.body?.cancel();
      // Three a minute: the first answer above used one, the refused POST none.
      expect((await site()).status).toBe(200);
      const third = await site();
      expect(third.status).toBe(200);
      await third.body?.cancel();
      const over = await site();
      expect(over.status).toBe(429);
      expect(await over.json()).toEqual({ message: "rate_limit_exceeded" });
    });
  });
});
