/** When the suite is given outside servers, they must answer: a set but unreachable server fails here. */
import { describe, expect, it } from "vitest";
import { DATABASE_URL, REDIS_URL } from "./helpers/env.ts";
import { openPostgres } from "../services/lib/db/postgres.ts";
import { connectRedis } from "../services/lib/redis.ts";

describe("configured servers", () => {
  it.runIf(DATABASE_URL)("DATABASE_URL answers", async () => {
    const db = await openPostgres(DATABASE_URL!);
    const [row] = await db.query<{ ok: number }>("select 1 as ok");
    expect(row.ok).toBe(1);
    await db.close();
  });

  it.runIf(REDIS_URL)("REDIS_URL answers", async () => {
    const redis = await connectRedis(REDIS_URL!);
    expect(await redis.ping()).toBe("PONG");
    redis.disconnect();
  });

  it("reports which servers the suite runs against", () => {
    const servers = [DATABASE_URL && "postgres", REDIS_URL && "redis"].filter(Boolean);
    console.info(
      `integration servers: ${servers.length ? servers.join(", ") : "none (embedded only)"}`,
    );
    expect(Array.isArray(servers)).toBe(true);
  });
});
