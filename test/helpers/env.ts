/**
 * The outside servers the suite was given. When DATABASE_URL or REDIS_URL is
 * set, storage and limit tests run against it too, and fail (never skip) when
 * it cannot be reached.
 */
export const DATABASE_URL = Deno.env.get("DATABASE_URL") || undefined;
export const REDIS_URL = Deno.env.get("REDIS_URL") || undefined;

export type StorageKind = "pglite" | "postgres";

/**
 * Every storage the suite runs against: PGlite always, Postgres when
 * configured. The storage-level tests (the storage modules beside the code,
 * test/storage_test.ts) and the system level run on each.
 */
export const STORAGES: StorageKind[] = DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];

/**
 * Which storages a test of the whole system in this process starts it on
 * (CRM_TEST_STORAGES): by default one, the real server when DATABASE_URL is
 * set (as a cluster runs) and PGlite otherwise; `others`, every other one
 * (`deno task test:system` runs the same files so, and the two runs together
 * cover both storages); `all`, both.
 */
export function systemStorages(
  setting: string | undefined,
  storages: StorageKind[],
): StorageKind[] {
  switch (setting ?? "") {
    case "":
    case "one":
      return storages.slice(-1);
    case "others":
      return storages.slice(0, -1);
    case "all":
      return storages;
    default:
      throw new Error(`CRM_TEST_STORAGES must be one, others or all: ${setting}`);
  }
}

/** The storages this run's integration files start the system on (systemStorages). */
export const SYSTEM_STORAGES: StorageKind[] = systemStorages(
  Deno.env.get("CRM_TEST_STORAGES") || undefined,
  STORAGES,
);

export const uniqueId = (prefix: string) =>
  `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
