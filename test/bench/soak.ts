/**
 * `deno task bench soak`: a mixed load (hot content reads, page views,
 * server events) at half the measured peak against `deno task start` for 10
 * minutes (SOAK_SECONDS to shorten or lengthen). The peak is measured first
 * with the same mix from closed-loop clients; the soak then paces its
 * requests. RSS of the system process and latency are taken over the first
 * and the last minute (a fifth of the run when shorter); RSS or median
 * latency growing more than 10% from start to end fails the run (non-zero
 * exit), as does any answer but 200 (204 for a page view). Not part of CI: it takes minutes.
 */
import type { BenchReport } from "./main.ts";
import { HttpConnection } from "./http_client.ts";
import { startFuzzTarget } from "./fuzz.ts";
import { memoryMb, percentile } from "./measure.ts";

const CONNECTIONS = 16;
const PEAK_SECONDS = 10;
const GROWTH_LIMIT = 1.1;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Window {
  latencies: number[];
  statuses: Record<string, number>;
}

const round = (n: number) => Math.round(n * 100) / 100;
/** Reads answer 200, page views 204, events 200. */
const ok = (status: number) => status === 200 || status === 204;
const progress = (line: string) => console.error(`soak: ${line}`);

/**
 * Request `n` of a connection's sequence `k`: kinds rotate 2 hot reads, a
 * page view, an event (by k, so every connection sends every kind); n keeps
 * ids and visitors apart.
 */
function mixed(
  connection: HttpConnection,
  keys: { siteKey: string; secretKey: string },
  n: number,
  k: number,
) {
  switch (k % 4) {
    case 2:
      return connection.post(
        "/marketing/view",
        {
          "content-type": "text/plain;charset=UTF-8",
          origin: "https://demo.example",
          "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0 Safari/537.36",
        },
        JSON.stringify({
          v: `soak-v${n % 500}`,
          s: `soak-s${n % 500}`,
          u: `https://demo.example/p${n % 50}`,
        }),
      );
    case 3:
      return connection.post("/marketing/event", {
        "content-type": "application/json",
        "x-event-key": keys.secretKey,
      }, JSON.stringify({ name: "newsletter_signup", event_id: `soak-${n}-${Math.random()}` }));
    default:
      return connection.get("/content/v1/pages/home", { "x-crm-key": keys.siteKey });
  }
}

/** An answer's status, "timeout" (none in 15 s) or "error"; a failed connection is replaced. */
async function ask(
  connections: HttpConnection[],
  c: number,
  url: string,
  keys: { siteKey: string; secretKey: string },
  n: number,
): Promise<number | string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const answer = await Promise.race([
      mixed(connections[c], keys, n, Math.floor(n / CONNECTIONS) + c),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), 15_000);
      }),
    ]);
    return answer.status;
  } catch (error) {
    connections[c].close();
    connections[c] = await HttpConnection.open(url);
    return (error as Error).message === "timeout" ? "timeout" : "error";
  } finally {
    clearTimeout(timer);
  }
}

export async function run(): Promise<BenchReport> {
  const seconds = Number(Deno.env.get("SOAK_SECONDS") ?? 600);
  const windowSeconds = Math.min(60, seconds / 5);
  const target = await startFuzzTarget();
  progress(`system up at ${target.url}; measuring the peak for ${PEAK_SECONDS} s`);
  const connections = await Promise.all(
    Array.from({ length: CONNECTIONS }, () => HttpConnection.open(target.url)),
  );
  try {
    // The peak: closed-loop clients as fast as the system answers.
    let done = 0;
    let peakErrors = 0;
    const peakEnd = performance.now() + PEAK_SECONDS * 1000;
    await Promise.all(connections.map(async (_, c) => {
      for (let i = c; performance.now() < peakEnd; i += CONNECTIONS) {
        const status = await ask(connections, c, target.url, target.keys, i);
        if (status !== 200 && status !== 204) peakErrors++;
        done++;
      }
    }));
    const peakRps = done / PEAK_SECONDS;
    const rate = peakRps / 2;
    if (!(rate > 0)) throw new Error("soak: the peak run answered nothing");
    progress(
      `peak ${Math.round(peakRps)} req/s; soaking at ${Math.round(rate)} req/s for ${seconds} s`,
    );

    // The soak: each connection paced to its share of half the peak.
    const windows: Record<"start" | "end", Window> = {
      start: { latencies: [], statuses: {} },
      end: { latencies: [], statuses: {} },
    };
    const statuses: Record<string, number> = {};
    const rss: Record<"start" | "end", number> = { start: 0, end: 0 };
    const started = performance.now();
    const ends = started + seconds * 1000;
    const windowOf = (at: number): Window | undefined =>
      at - started < windowSeconds * 1000
        ? windows.start
        : ends - at < windowSeconds * 1000
        ? windows.end
        : undefined;
    const rssTimers = [
      setTimeout(() => rss.start = memoryMb(target.pid, "VmRSS"), windowSeconds * 1000),
      setTimeout(() => rss.end = memoryMb(target.pid, "VmRSS"), seconds * 1000 - 500),
    ];
    const interval = (1000 * CONNECTIONS) / rate;
    let sent = 0;
    await Promise.all(connections.map(async (_, c) => {
      let next = started + (interval * c) / CONNECTIONS;
      for (let i = c; next < ends; i += CONNECTIONS) {
        if (c === 0 && i % (CONNECTIONS * 2000) === 0) {
          progress(
            `${Math.round((performance.now() - started) / 1000)} s: ${JSON.stringify(statuses)}`,
          );
        }
        const wait = next - performance.now();
        if (wait > 0) await sleep(wait);
        const asked = performance.now();
        const status = await ask(connections, c, target.url, target.keys, 1_000_000 + i);
        const latency = performance.now() - asked;
        sent++;
        statuses[status] = (statuses[status] ?? 0) + 1;
        const window = windowOf(asked);
        if (window) {
          window.latencies.push(latency);
          window.statuses[status] = (window.statuses[status] ?? 0) + 1;
        }
        next += interval;
      }
    }));
    rssTimers.forEach(clearTimeout);
    const actualSeconds = (performance.now() - started) / 1000;

    const row = (name: "start" | "end") => {
      const sorted = windows[name].latencies.sort((a, b) => a - b);
      return {
        window: `${name} (${windowSeconds} s)`,
        requests: sorted.length,
        "p50 ms": round(percentile(sorted, 0.5)),
        "p99 ms": round(percentile(sorted, 0.99)),
        "RSS MB": rss[name],
      };
    };
    const [first, last] = [row("start"), row("end")];
    const growth = {
      rss: last["RSS MB"] / first["RSS MB"],
      p50: last["p50 ms"] / first["p50 ms"],
      p99: last["p99 ms"] / first["p99 ms"],
    };
    const non200 = Object.entries(statuses).filter(([status]) => !ok(Number(status)));
    const failures = [
      // A window without RSS readings or answers gives no growth to judge: that fails too.
      ...(Number.isFinite(growth.rss) && Number.isFinite(growth.p50)
        ? []
        : ["a window without RSS readings or answers: nothing to compare"]),
      ...(growth.rss > GROWTH_LIMIT ? [`RSS grew ${Math.round((growth.rss - 1) * 100)}%`] : []),
      ...(growth.p50 > GROWTH_LIMIT
        ? [`median latency grew ${Math.round((growth.p50 - 1) * 100)}%`]
        : []),
      ...(non200.length
        ? [`answers other than 200 and 204: ${JSON.stringify(Object.fromEntries(non200))}`]
        : []),
    ];
    const report: BenchReport = {
      name: "soak",
      description: `Mixed load (2 hot content reads : 1 page view : 1 server event) at half ` +
        `the measured peak for ${Math.round(actualSeconds)} s against \`deno task start\`, ` +
        `${CONNECTIONS} keep-alive connections.`,
      rows: [first, last],
      notes: [
        `peak (closed loop, ${PEAK_SECONDS} s): ${
          Math.round(peakRps)
        } req/s (${peakErrors} non-200); ` +
        `soak rate ${Math.round(rate)} req/s, achieved ${Math.round(sent / actualSeconds)} req/s`,
        `answers: ${JSON.stringify(statuses)}`,
        `growth start→end: RSS ${round((growth.rss - 1) * 100)}%, p50 ${
          round((growth.p50 - 1) * 100)
        }%, p99 ${round((growth.p99 - 1) * 100)}% (the run fails past +10% for RSS or p50; ` +
        `p99 is reported only: on a shared 2-core machine it swings more than that between ` +
        `identical minutes)`,
        `storage: ${target.storage}`,
        failures.length ? `FAILED: ${failures.join("; ")}` : "passed",
      ],
    };
    if (failures.length) {
      console.error(JSON.stringify(report, null, 2));
      throw new Error(`soak failed: ${failures.join("; ")}`);
    }
    return report;
  } finally {
    connections.forEach((connection) => connection.close());
    await target.stop();
  }
}
