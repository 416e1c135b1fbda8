/**
 * No report is built on the server's own time zone: `deno task start`
 * started with TZ and PGTZ set to Pacific/Chatham (a child process, since a
 * process's zone cannot change once it runs) gives Berlin's days and hours.
 */
import { describe, it } from "vitest";
import { startTask } from "../helpers/process.ts";
import { freePort } from "../helpers/ports.ts";
import { statsSite, storeRows } from "../helpers/stats.ts";
import { BERLIN_ROWS, expectBerlinAnswers } from "../helpers/berlin_day.ts";

describe("answers that ignore the process's zone", () => {
  it("gives Berlin's days and hours from a system started with TZ=Pacific/Chatham", async () => {
    const dir = await Deno.makeTempDir();
    const seed = `${dir}/seed.json`;
    await Deno.writeTextFile(seed, JSON.stringify(await statsSite("berlin", "Europe/Berlin")));
    const ingestUrl = `http://127.0.0.1:${freePort()}`;
    const started = await startTask(["--seed", seed], {
      TZ: "Pacific/Chatham",
      PGTZ: "Pacific/Chatham",
      // Embedded storage of its own: never the suite's Postgres or Redis.
      DATABASE_URL: "",
      REDIS_URL: "",
      CRM_DATA_DIR: dir,
      INGEST_URL: ingestUrl,
    }, { direct: true });
    try {
      await storeRows(ingestUrl, "berlin", BERLIN_ROWS);
      await expectBerlinAnswers({ url: started.url });
    } finally {
      await started.stop();
      await Deno.remove(dir, { recursive: true });
    }
  });
});
