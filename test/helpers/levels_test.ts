/**
 * The integration files start the system on SYSTEM_STORAGES (one storage in
 * `deno task test`, the other in `deno task test:system`), not on every
 * storage: only the files named here may use STORAGES, each for its reason.
 */
import { describe, expect, it } from "vitest";

const EVERY_STORAGE: Record<string, string> = {
  "test/storage_test.ts": "storage-level: the storage interface itself",
  "test/migrations_upgrade_test.ts": "storage-level: the previous release's database upgraded",
  "test/commands_test.ts": "system level (deno task test:system)",
  "test/manifest_import_interrupted_test.ts": "system level (deno task test:system)",
  "test/content_api_redis_failover_test.ts": "one storage, the last of STORAGES",
  "test/demo_page_test.ts": "one storage, the last of STORAGES: the Chromium smoke test",
};

function testFiles(dir: URL, prefix: string): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${prefix}/${entry.name}`;
    if (entry.isDirectory && entry.name !== "helpers" && entry.name !== "fixtures") {
      found.push(...testFiles(new URL(`${entry.name}/`, dir), path));
    } else if (entry.name.endsWith("_test.ts")) found.push(path);
  }
  return found;
}

describe("the storages of the integration files", () => {
  it("are SYSTEM_STORAGES except in the storage-level and system files named", () => {
    const files = testFiles(new URL("../", import.meta.url), "test");
    expect(files.length).toBeGreaterThan(20);
    const every = files.filter((file) =>
      /\bSTORAGES\b/.test(Deno.readTextFileSync(new URL(`../../${file}`, import.meta.url)))
    );
    expect(
      every.filter((file) => !(file in EVERY_STORAGE)),
      "integration files that run the system on every storage: use SYSTEM_STORAGES (test/helpers/env.ts)",
    ).toEqual([]);
  });
});
