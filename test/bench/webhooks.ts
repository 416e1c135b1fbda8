/**
 * `deno task bench webhooks`: how long a webhook message takes from its
 * cause to a receiver on the loopback, on PGlite and (with DATABASE_URL) on
 * Postgres, with the system clock. lead.created: from the lead's receivedAt
 * (taken before the group commit that enqueues it) to the receiver, one lead
 * at a time, then 200 leads sent 20 at once (the worker makes at most 3
 * attempts to one URL at once). content.published: from the import's time to
 * the receiver. post.published: from the post's publishedAt (scheduled 3 s
 * ahead) to the receiver: the worker's poll, at most a second, decides it.
 */
import type { BenchReport, BenchRow } from "./main.ts";
import { percentile } from "./measure.ts";
import { DATABASE_URL, type StorageKind } from "../helpers/env.ts";
import { startTestSystem, type TestSystem } from "../helpers/system.ts";
import { analyticsManifest, type Json, SECRET_KEY } from "../helpers/marketing.ts";
import { type Delivery, startReceiver } from "../helpers/webhook_receiver.ts";
import { importManifest } from "../../services/cli/site_manifest.ts";

const SECRET = "whsec_" + btoa("b".repeat(32));
const ONE_BY_ONE = 100;
const BURST = 200;
const BURST_WIDTH = 20;
const IMPORTS = 10;
const POSTS = 5;

function postLead(sys: TestSystem, id: string): Promise<Response> {
  return fetch(`${sys.url}/marketing/lead`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-event-key": SECRET_KEY },
    body: JSON.stringify({ lead_id: id, email: `${id}@bench.example` }),
  });
}

const latency = (d: Delivery) => d.arrivedAtMs - Date.parse(d.body.timestamp);

function row(storage: string, what: string, samples: number[], extra: BenchRow = {}): BenchRow {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    storage,
    what,
    n: samples.length,
    p50_ms: Math.round(percentile(sorted, 0.5)),
    p95_ms: Math.round(percentile(sorted, 0.95)),
    max_ms: Math.round(sorted[sorted.length - 1]),
    ...extra,
  };
}

async function measure(storage: StorageKind): Promise<BenchRow[]> {
  const receiver = startReceiver(SECRET);
  const manifest = await analyticsManifest();
  manifest.webhooks = [{
    url: `${receiver.url}/bench`,
    events: ["content.published", "post.published", "lead.created"],
    secret: SECRET,
  }];
  const sys = await startTestSystem({
    storage,
    seed: manifest,
    env: { WEBHOOK_ALLOW_PRIVATE: "1", WEBHOOK_ALLOW_INSECURE: "1" },
  });
  const rows: BenchRow[] = [];
  try {
    await receiver.waitFor((d) => d.type === "content.published");
    const leads = (prefix: string) => (d: Delivery) =>
      d.type === "lead.created" && String(d.body.data.leadId).startsWith(prefix);
    for (let i = 0; i < ONE_BY_ONE; i++) {
      await (await postLead(sys, `one-${i}`)).body?.cancel();
      await receiver.waitFor(leads("one-"), i + 1);
    }
    rows.push(
      row(
        storage,
        "lead.created, one at a time",
        receiver.deliveries.filter(leads("one-")).map(latency),
      ),
    );

    const started = performance.now();
    for (let i = 0; i < BURST; i += BURST_WIDTH) {
      await Promise.all(
        Array.from(
          { length: BURST_WIDTH },
          (_, j) => postLead(sys, `burst-${i + j}`).then((r) => r.body?.cancel()),
        ),
      );
    }
    const burst = await receiver.waitFor(leads("burst-"), BURST, 120_000);
    const seconds = (Math.max(...burst.map((d) => d.arrivedAt)) - started) / 1000;
    rows.push(
      row(storage, `lead.created, ${BURST} sent ${BURST_WIDTH} at once`, burst.map(latency), {
        per_s: Math.round(BURST / seconds),
      }),
    );

    const imports: Json = structuredClone(manifest);
    for (let i = 0; i < IMPORTS; i++) {
      imports.pages[0].sections[0].blocks[0].content.en = `Hello ${i}`;
      await importManifest(sys.system.admin, JSON.stringify(imports));
      await receiver.waitFor((d) => d.type === "content.published", i + 2);
    }
    rows.push(
      row(storage, "content.published", receiver.of("content.published").slice(1).map(latency)),
    );

    const scheduled: Json = structuredClone(imports);
    const base = Date.now() + 3_000;
    for (let i = 0; i < POSTS; i++) {
      scheduled.posts.push({
        slug: `bench-${i}`,
        status: "published",
        publishedAt: new Date(base + i * 700).toISOString(),
        title: { en: "Bench" },
        body: { en: "<p>Bench</p>" },
      });
    }
    await importManifest(sys.system.admin, JSON.stringify(scheduled));
    const posts = await receiver.waitFor((d) => d.type === "post.published", POSTS, 30_000);
    rows.push(row(storage, "post.published (from publishedAt)", posts.map(latency)));
  } finally {
    await sys.close();
    await receiver.close();
  }
  return rows;
}

export async function run(): Promise<BenchReport> {
  const storages: StorageKind[] = DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];
  const rows: BenchRow[] = [];
  for (const storage of storages) rows.push(...(await measure(storage)));
  return {
    name: "webhooks",
    description:
      "Milliseconds from a message's cause (the lead's receivedAt, the import, the post's publishedAt) to a receiver on the loopback, through `deno task start`'s system in this process.",
    rows,
    notes: DATABASE_URL ? [] : ["DATABASE_URL unset: PGlite only"],
  };
}
