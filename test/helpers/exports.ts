/** Stored analytics as the operator reads them: `admin events|pageviews|leads export`, in process. */
import type { TestSystem } from "./system.ts";
import { runAdmin } from "./admin.ts";

export type Row = Record<string, unknown>;

export async function exportRows(
  sys: TestSystem,
  kind: "events" | "pageviews" | "leads",
  siteId: string,
): Promise<Row[]> {
  const result = await runAdmin([kind, "export", siteId], {
    AUTH_URL: sys.config.authUrl,
    CONTENT_URL: sys.config.contentUrl,
    INGEST_URL: sys.config.ingestUrl,
  });
  if (result.code !== 0) throw new Error(`${kind} export failed: ${result.stderr}`);
  return result.stdout.split("\n").filter((line) => line.trim() !== "").map((line) =>
    JSON.parse(line)
  );
}

/** Polls until the rows satisfy done (beacons are fire and forget), or fails after timeoutMs. */
export async function waitForRows(
  read: () => Promise<Row[]>,
  done: (rows: Row[]) => boolean,
  timeoutMs = 8000,
): Promise<Row[]> {
  const deadline = Date.now() + timeoutMs;
  let rows = await read();
  while (!done(rows)) {
    if (Date.now() > deadline) {
      throw new Error(`stored rows never matched; last read:\n${JSON.stringify(rows, null, 1)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
    rows = await read();
  }
  return rows;
}
