/**
 * The outside servers the suite was given. When DATABASE_URL or REDIS_URL is
 * set, storage and limit tests run against it too, and fail (never skip) when
 * it cannot be reached.
 */
export const DATABASE_URL = Deno.env.get("DATABASE_URL") || undefined;
export const REDIS_URL = Deno.env.get("REDIS_URL") || undefined;

export type StorageKind = "pglite" | "postgres";

/** Every storage the suite runs against: PGlite always, Postgres when configured. */
export const STORAGES: StorageKind[] = DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];

export const uniqueId = (prefix: string) =>
  `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
