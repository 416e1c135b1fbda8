/**
 * Site keys through the real path, on every storage: header or query key,
 * several active keys, 401 invalid_key for missing, malformed, unknown and
 * revoked keys, the key choosing the site, revocation at once here, within
 * KEY_CACHE_TTL_S in a replica that cannot be told, at once in one told
 * through Redis, and the key never written to a log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL, REDIS_URL, SYSTEM_STORAGES, uniqueId } from "./helpers/env.ts";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import {
  ACME_KEY,
  ACME_KEY_2,
  acmeSite,
  call,
  type CallOptions,
  ERROR_HEADERS,
  errorHeaders,
  eventually,
  eventuallyOnClock,
  type Json,
  OTHER_KEY,
  otherSite,
  UNKNOWN_KEY,
} from "./helpers/content.ts";
import { type GatewayReplica, startGatewayReplica } from "./helpers/gateway.ts";
import { captureLog } from "./helpers/log_capture.ts";
import { type OwnRedis, ownRedisWanted, startOwnRedis } from "./helpers/redis_server.ts";
import { importManifest } from "../services/cli/site_manifest.ts";
import { KeyKind } from "../services/lib/gen/crm/auth/v1/auth_pb.ts";
import { ManualClock } from "../services/lib/clock.ts";

const TTL_S = 2;
/** Redis for the replica tests: REDIS_URL, or a server of our own where installed. */
const REDIS_WANTED = REDIS_URL !== undefined || await ownRedisWanted();

describe.each(SYSTEM_STORAGES)("content API keys on %s", (storage) => {
  /** The systems' time: KEY_CACHE_TTL_S runs out by moving it. */
  const clock = new ManualClock();
  /** Every line the system logs, at debug level: no key may appear in any. */
  const captured = captureLog();
  let sys: TestSystem;
  const get = (path: string, options?: CallOptions) => call(sys.url, path, options);
  const newKey = async () =>
    (await sys.system.admin.auth.createKey({ siteId: "acme", kind: KeyKind.SITE })).key;
  const revoke = (key: string) => sys.system.admin.auth.revokeKey({ key });

  beforeAll(async () => {
    sys = await startTestSystem({
      storage,
      seed: await acmeSite(),
      env: { KEY_CACHE_TTL_S: String(TTL_S), LOG_LEVEL: "debug" },
      log: captured.log,
      clock,
    });
    await importManifest(sys.system.admin, JSON.stringify(await otherSite()));
  });
  afterAll(async () => {
    await sys?.close();
  });

  const expectInvalidKey = (answer: Json) => {
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ message: "invalid_key" });
    expect(errorHeaders(answer)).toEqual(ERROR_HEADERS);
  };

  it("takes the key from the x-crm-key header or the key query parameter", async () => {
    const byHeader = await get("/content/v1/pages/home");
    expect(byHeader.status).toBe(200);
    const byQuery = await get(`/content/v1/pages/home?key=${ACME_KEY}`, { key: null });
    expect(byQuery.status).toBe(200);
    expect(byQuery.body).toEqual(byHeader.body);
    const mixed = await get(`/content/v1/blocks/title?lang=de&key=${ACME_KEY}`, { key: null });
    expect(mixed.body.content).toEqual({ de: "Hallo" });
  });

  it("prefers the header when both are sent", async () => {
    expect((await get(`/content/v1/langs?key=${UNKNOWN_KEY}`)).status).toBe(200);
    expectInvalidKey(await get(`/content/v1/langs?key=${ACME_KEY}`, { key: UNKNOWN_KEY }));
  });

  it("answers 401 invalid_key to a missing, malformed or unknown key", async () => {
    expectInvalidKey(await get("/content/v1/pages/home", { key: null }));
    expectInvalidKey(await get("/content/v1/pages/home?key=", { key: null }));
    const malformed = [
      "",
      ACME_KEY.toUpperCase(),
      "PK_" + ACME_KEY.slice(3),
      ACME_KEY.slice(0, -1),
      ACME_KEY + "0",
      "pk_" + "g".repeat(32),
      "sk_" + "0".repeat(48),
      ACME_KEY.slice(3),
    ];
    for (const key of malformed) {
      expectInvalidKey(await get("/content/v1/langs", { key: key || null }));
      expectInvalidKey(
        await get(`/content/v1/langs?key=${encodeURIComponent(key)}`, { key: null }),
      );
    }
    // HTTP strips the spaces around a header value, never inside a query value.
    expectInvalidKey(await get(`/content/v1/langs?key=${ACME_KEY}%20`, { key: null }));
    expectInvalidKey(await get("/content/v1/langs", { key: UNKNOWN_KEY }));
    for (
      const path of [
        "/content/v1/pages/home",
        "/content/v1/sections/hero",
        "/content/v1/blocks/title",
        "/content/v1/blog",
        "/content/v1/blog/hello-world",
        "/content/v1/langs",
      ]
    ) {
      expectInvalidKey(await get(path, { key: null }));
      expectInvalidKey(await get(path, { key: UNKNOWN_KEY }));
    }
  });

  it("checks the key before the marker, the language and the content", async () => {
    for (
      const path of [
        "/content/v1/pages/a",
        "/content/v1/pages/home?lang=xx",
        "/content/v1/blog/nope",
      ]
    ) {
      expectInvalidKey(await get(path, { key: UNKNOWN_KEY }));
    }
  });

  it("lets several keys of a site work at once, each seeing the same content", async () => {
    const one = await get("/content/v1/pages/home", { key: ACME_KEY });
    const two = await get("/content/v1/pages/home", { key: ACME_KEY_2 });
    expect(two.status).toBe(200);
    expect(two.body).toEqual(one.body);
  });

  it("chooses the site by the key alone", async () => {
    const other = await get("/content/v1/blocks/title", { key: OTHER_KEY });
    expect(other.body.content).toEqual({ fr: "Bonjour", en: "Hello from other" });
    expect((await get("/content/v1/langs", { key: OTHER_KEY })).body).toEqual({
      langs: ["fr", "en"],
    });
    expect((await get("/content/v1/pages/about_us", { key: OTHER_KEY })).body).toEqual({
      message: "page_not_found",
    });
    expect((await get("/content/v1/blog/hello-world", { key: OTHER_KEY })).body.post.title)
      .toEqual({ fr: "Autre" });
    expect((await get("/content/v1/blog/hello-world")).body.post.title.en).toBe("Hello world");
  });

  it("accepts a new key at once and refuses it at once when revoked (rotation)", async () => {
    const key = await newKey();
    expect((await get("/content/v1/pages/home", { key })).status).toBe(200);
    await revoke(key);
    expectInvalidKey(await get("/content/v1/pages/home", { key }));
    expectInvalidKey(await get(`/content/v1/pages/home?key=${key}`, { key: null }));
    // The other keys of the site keep working.
    expect((await get("/content/v1/pages/home")).status).toBe(200);
  });

  it("refuses a revoked key in a replica without Redis within KEY_CACHE_TTL_S", async () => {
    const replica = await startGatewayReplica(sys);
    try {
      const key = await newKey();
      expect((await call(replica.url, "/content/v1/pages/home", { key })).status).toBe(200);
      const revokedAt = clock.now();
      await revoke(key);
      expectInvalidKey(await get("/content/v1/pages/home", { key }));
      const refused = await eventuallyOnClock(
        clock,
        async () => (await call(replica.url, "/content/v1/pages/home", { key })).status === 401,
        TTL_S * 1000 + 1000,
        50,
      );
      expect(refused).toBe(true);
      expect(clock.now() - revokedAt).toBeLessThanOrEqual(TTL_S * 1000 + 750);
    } finally {
      await replica.close();
    }
  });

  it.skipIf(storage !== "postgres")(
    "refuses it within KEY_CACHE_TTL_S in a second system on the same database",
    async () => {
      const second = await startTestSystem({
        storage,
        databaseUrl: sys.databaseUrl,
        env: { KEY_CACHE_TTL_S: String(TTL_S) },
        clock,
      });
      try {
        const key = await newKey();
        expect((await call(second.url, "/content/v1/pages/home", { key })).status).toBe(200);
        const revokedAt = clock.now();
        await revoke(key);
        const refused = await eventuallyOnClock(
          clock,
          async () => (await call(second.url, "/content/v1/pages/home", { key })).status === 401,
          TTL_S * 1000 + 1000,
          50,
        );
        expect(refused).toBe(true);
        expect(clock.now() - revokedAt).toBeLessThanOrEqual(TTL_S * 1000 + 750);
      } finally {
        await second.close();
      }
    },
  );

  // The system of this file logs at debug level; the lines of every earlier test are searched too.
  it("never writes a key to a log line, at debug level either", async () => {
    const paths = [
      "/content/v1/pages/home",
      "/content/v1/pages/a",
      "/content/v1/blog/nope",
      "/content/v1/page/home",
      "/content/v1/langs/x/y",
    ];
    for (const path of paths) {
      await call(sys.url, `${path}?key=${ACME_KEY}`, { key: null });
      await call(sys.url, `${path}?lang=de&key=${ACME_KEY_2}&x=1`, { key: null });
      await call(sys.url, `${path}?key=${UNKNOWN_KEY}`, { key: null });
      await call(sys.url, path, { key: ACME_KEY });
      await call(sys.url, `${path}?KEY=${ACME_KEY}`, { key: null, method: "POST" });
    }
    const access = captured.find("request");
    expect(access.length).toBeGreaterThanOrEqual(paths.length * 5);
    expect(access.some((r) => String(r.path).includes("key=***"))).toBe(true);
    for (const line of captured.lines) {
      for (const key of [ACME_KEY, ACME_KEY_2, UNKNOWN_KEY]) {
        expect(line).not.toContain(key);
        expect(line).not.toContain(key.slice(3));
      }
    }
  });
});

/**
 * Replicas told through Redis: the configured REDIS_URL when there is one,
 * else a redis-server of the test's own where the binary is installed.
 */
describe.each(SYSTEM_STORAGES)("key revocation through Redis on %s", (storage) => {
  const wanted = REDIS_WANTED;
  let own: OwnRedis | undefined;
  let redisUrl: string;
  let sys: TestSystem;
  const prefix = `${uniqueId("crmkeys")}:`;

  beforeAll(async () => {
    if (!wanted) return;
    if (!REDIS_URL) own = await startOwnRedis();
    redisUrl = REDIS_URL ?? own!.url;
    sys = await startTestSystem({
      storage,
      seed: await acmeSite(),
      // A long TTL: only the message through Redis can explain a quick refusal.
      env: { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix, KEY_CACHE_TTL_S: "60" },
    });
  });
  afterAll(async () => {
    await sys?.close();
    await own?.close();
  });

  const checkReplica = async (url: string) => {
    const key = (await sys.system.admin.auth.createKey({ siteId: "acme", kind: KeyKind.SITE }))
      .key;
    expect((await call(url, "/content/v1/pages/home", { key })).status).toBe(200);
    expect((await call(url, "/content/v1/pages/home", { key })).status).toBe(200);
    const revokedAt = Date.now();
    await sys.system.admin.auth.revokeKey({ key });
    const refused = await eventually(
      async () => (await call(url, "/content/v1/pages/home", { key })).status === 401,
      5000,
      20,
    );
    expect(refused).toBe(true);
    expect(Date.now() - revokedAt).toBeLessThan(1000);
  };

  it.skipIf(!wanted)("refuses a revoked key at once in another gateway replica", async () => {
    let replica: GatewayReplica | undefined;
    try {
      replica = await startGatewayReplica(sys, { redisUrl });
      await checkReplica(replica.url);
    } finally {
      await replica?.close();
    }
  });

  it.skipIf(!wanted || storage !== "postgres" || !DATABASE_URL)(
    "refuses it at once in a second system sharing the database and the Redis prefix",
    async () => {
      const second = await startTestSystem({
        storage,
        databaseUrl: sys.databaseUrl,
        env: { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix, KEY_CACHE_TTL_S: "60" },
      });
      try {
        await checkReplica(second.url);
      } finally {
        await second.close();
      }
    },
  );
});
