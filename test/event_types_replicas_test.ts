/**
 * An import's event types reach every ingest-service replica at once through
 * the bus (Redis), not after the cache's TTL: a second replica on the same
 * storage accepts a newly declared event right after the import, while the
 * injected clock stands still, so no expiry can explain it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDIS_URL, SYSTEM_STORAGES, uniqueId } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { analyticsManifest, type Json } from "./helpers/marketing.ts";
import { eventually } from "./helpers/content.ts";
import { type OwnRedis, ownRedisWanted, startOwnRedis } from "./helpers/redis_server.ts";
import { ManualClock } from "../services/lib/clock.ts";
import { createRedisBus } from "../services/lib/bus.ts";
import { serviceClient } from "../services/lib/rpc/client.ts";
import { IngestService, Outcome, Source } from "../services/lib/gen/crm/ingest/v1/ingest_pb.ts";
import { startIngestService } from "../services/ingest/main.ts";
import type { RunningService } from "../services/lib/service_runtime.ts";
import { eventOf } from "../services/gateway/ingest_body.ts";
import { importManifest } from "../services/cli/site_manifest.ts";

const REDIS_WANTED = REDIS_URL !== undefined || await ownRedisWanted();

describe.each(SYSTEM_STORAGES)("event types across ingest-service replicas on %s", (storage) => {
  const clock = new ManualClock();
  let own: OwnRedis | undefined;
  let sys: TestSystem;
  let replica: RunningService;
  let manifest: Json;

  beforeAll(async () => {
    if (!REDIS_WANTED) return;
    if (!REDIS_URL) own = await startOwnRedis();
    const prefix = `${uniqueId("crmtypes")}:`;
    manifest = await analyticsManifest();
    sys = await startTestSystem({
      storage,
      seed: manifest,
      clock,
      env: { REDIS_URL: REDIS_URL ?? own!.url, REDIS_KEY_PREFIX: prefix },
    });
    // A second replica: the same storage and Redis, a bus (and caches) of its own.
    const platform = sys.system.platform;
    replica = await startIngestService(
      { ...platform, bus: createRedisBus(platform.redis!, platform.log, prefix) },
      { host: "127.0.0.1", port: 0, migrateOnStart: false },
    );
  });
  afterAll(async () => {
    await replica?.close();
    await sys?.close();
    await own?.close();
  });

  const sendTo = async (url: string, name: string) => {
    const ingest = serviceClient(IngestService, url);
    const { results } = await ingest.ingest({
      items: [{
        siteId: "demo",
        source: Source.SERVER,
        receivedAtMs: BigInt(clock.now()),
        body: { case: "event", value: eventOf({ name, id: uniqueId("ev-") }) },
      }],
    });
    return results[0];
  };

  it.skipIf(!REDIS_WANTED)(
    "accepts a type declared by an import at once in another replica",
    async () => {
      // The replica has the site's types cached: the new name is unknown there.
      const before = await sendTo(replica.url, "fresh_type");
      expect(before.outcome).toBe(Outcome.REFUSED);
      expect(before.error?.reason).toBe("unknown_event");

      const next = structuredClone(manifest);
      next.eventTypes.push({ name: "fresh_type", params: [] });
      await importManifest(sys.system.admin, JSON.stringify(next));

      // The replica that applied the import knows at once; the other as soon as
      // the message arrives. The clock stands still, so no TTL runs out.
      expect((await sendTo(sys.config.ingestUrl, "fresh_type")).outcome).toBe(Outcome.STORED);
      const stored = await eventually(
        async () => (await sendTo(replica.url, "fresh_type")).outcome === Outcome.STORED,
        2000,
        20,
      );
      expect(stored).toBe(true);
    },
  );
});
