/**
 * `deno task bench fuzz`: an HTTP fuzzer against `deno task start`. A seeded
 * generator makes requests from the gateway's route list and mutates them
 * (methods, paths, query strings, headers, bodies, encodings, sizes), and a
 * share go over raw sockets: malformed request lines, slow uploads and
 * uploads cut off mid-body. The run fails (non-zero exit) on any answer 500,
 * on an error of a public route (/content, /marketing, /stats) that is not a
 * JSON body with a string `message`, on RSS growing past its bound, or on a
 * system not healthy afterwards. FUZZ_REQUESTS sets the count (100,000 by
 * default), FUZZ_SEED the seed. test/fuzz/http_test.ts runs a small version.
 */
import type { BenchReport } from "./main.ts";
import { EVENT_KEYS, LEAD_KEYS } from "../../services/gateway/ingest_body.ts";
import { CONTENT_ROUTES } from "../../services/gateway/routes/content.ts";
import { MARKETING_ROUTES } from "../../services/gateway/routes/marketing.ts";
import { QUERY_FIELDS } from "../../services/lib/stats/vocabulary.ts";
import { seededRandom } from "../../services/lib/random.ts";
import { DATABASE_URL } from "../helpers/env.ts";
import { startTask } from "../helpers/process.ts";
import { freshPostgresUrl } from "../helpers/storage.ts";
import { RELAXED_LIMITS } from "../helpers/system.ts";
import { memoryMb } from "./measure.ts";

export interface Keys {
  siteKey: string;
  secretKey: string;
  reportKey: string;
}

/** The keys `deno task start` prints for its demo site. */
export function keysOfBanner(banner: string): Keys {
  const find = (pattern: RegExp) => {
    const found = pattern.exec(banner)?.[1];
    if (!found) throw new Error(`no ${pattern} in the banner:\n${banner}`);
    return found;
  };
  return {
    siteKey: find(/site key:\s+(\S+)/),
    secretKey: find(/secret key:\s+(\S+)/),
    reportKey: find(/report key (\w+)/),
  };
}

/** Seeded choices (mulberry32), so a failing request can be made again. */
export function seeded(seed: number) {
  const next = seededRandom(seed);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
type Rng = ReturnType<typeof seeded>;

const STATS_PATH = "/stats/v1/query";
const OTHER_ROUTES = ["/widget.js", "/demo", "/dashboard/", "/livez", "/healthz", "/"];
const ROUTES = [
  ...CONTENT_ROUTES.map((r) => r.path),
  ...MARKETING_ROUTES.map((r) => r.path),
  STATS_PATH,
  ...OTHER_ROUTES,
];
const METHODS = ["GET", "GET", "POST", "POST", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"];
const CONTENT_QUERY = ["lang", "section", "limit", "offset", "page", "perPage", "fields", "tag"];
const EVENT_FIELDS = [...Object.values(EVENT_KEYS).flat(), ...Object.values(LEAD_KEYS).flat()];
const CONTENT_TYPES = [
  "application/json",
  "text/plain;charset=UTF-8",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=latin1",
  "",
  "garbage/\u00ff",
];

/** A string a parser may not expect. */
function nasty(rng: Rng): string {
  switch (rng.int(14)) {
    case 0:
      return "";
    case 1:
      return "home";
    case 2:
      return "a".repeat(rng.pick([64, 300, 3000, 9000]));
    case 3:
      return "%00%ff%fe";
    case 4:
      return "..%2F..%2Fetc%2Fpasswd";
    case 5:
      return "\u00e9\u{1F600}\u202e";
    case 6:
      return "%E0%A4%A";
    case 7:
      return String(rng.pick([-1, 0, 1e21, 2 ** 53, NaN, -0.5]));
    case 8:
      return "<script>alert(1)</script>";
    case 9:
      return "javascript:alert(1)";
    case 10:
      return "en,de,fr,xx,".repeat(rng.int(30));
    case 11:
      return Array.from({ length: 1 + rng.int(20) }, () => String.fromCharCode(rng.int(0x2fff)))
        .join("");
    case 12:
      return "hero";
    default:
      return rng.pick(["en", "de", "en-US", "zz", "blog", "post-1", "title", "EN"]);
  }
}

/** A JSON value of any shape. */
function anyValue(rng: Rng, depth = 0): unknown {
  switch (rng.int(depth > 2 ? 5 : 8)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1.5, 1e308, -1e308, 2 ** 63, 42]);
    case 3:
    case 4:
      return nasty(rng);
    case 5:
      return Array.from({ length: rng.int(5) }, () => anyValue(rng, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: rng.int(5) }, () => [
          rng.chance(0.6) ? rng.pick(EVENT_FIELDS) : nasty(rng),
          anyValue(rng, depth + 1),
        ]),
      );
  }
}

function jsonBody(rng: Rng, path: string): unknown {
  if (path === STATS_PATH) {
    const query: Record<string, unknown> = {
      metrics: [rng.pick(["pageviews", "visitors", "events", "nope"])],
      date_range: rng.pick(["7d", "30d", "today", ["2026-01-01", "2026-02-01"], "x"]),
    };
    for (let i = rng.int(4); i > 0; i--) query[rng.pick(QUERY_FIELDS)] = anyValue(rng);
    return query;
  }
  const body: Record<string, unknown> = {
    name: rng.pick(["signup", "purchase", "x".repeat(200), ""]),
    event_id: `fz-${rng.int(1e9)}`,
    url: rng.pick(["https://demo.example/a?b=1", "/relative", "javascript:x", nasty(rng)]),
  };
  for (let i = rng.int(5); i > 0; i--) {
    if (rng.chance(0.5)) delete body[rng.pick(Object.keys(body))];
    else body[rng.pick(EVENT_FIELDS)] = anyValue(rng);
  }
  return rng.chance(0.05) ? [body, body] : body;
}

export interface FuzzRequest {
  /** fetch: an ordinary client; raw: bytes on a socket; slow: a body in pieces; cut: a body never finished. */
  mode: "fetch" | "raw" | "slow" | "cut";
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

const encoder = new TextEncoder();

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export async function generateRequest(rng: Rng, keys: Keys): Promise<FuzzRequest> {
  const template = rng.pick(ROUTES);
  let path = template.replace(/:\w+/g, () => encodeURIComponent(nasty(rng)));
  if (rng.chance(0.15)) {
    path = rng.pick([
      (p: string) => p + "/",
      (p: string) => p.replace("/v1/", "/v2/"),
      (p: string) => p.toUpperCase(),
      (p: string) => p.replace(/\//g, "//"),
      (p: string) => `${p}/${nasty(rng)}`,
      (p: string) => p.slice(0, rng.int(p.length) + 1),
      (_p: string) => `/${encodeURIComponent(nasty(rng))}`,
    ])(path);
  }
  if (!path.startsWith("/")) path = `/${path}`;
  if (rng.chance(0.5)) {
    const params = Array.from({ length: 1 + rng.int(4) }, () => {
      const key = rng.chance(0.7) ? rng.pick(CONTENT_QUERY) : nasty(rng);
      return `${encodeURIComponent(key)}=${
        rng.chance(0.8) ? encodeURIComponent(nasty(rng)) : nasty(rng).replace(/[#\s]/g, "")
      }`;
    });
    path += `?${params.join("&")}`;
  }
  const public_ = path.startsWith("/marketing/") || path === STATS_PATH;
  const method = rng.chance(0.7) && public_ ? "POST" : rng.pick(METHODS);
  const headers: Record<string, string> = {};
  if (rng.chance(0.7)) {
    headers["x-crm-key"] = rng.pick([
      keys.siteKey,
      keys.siteKey,
      "pk_" + "0".repeat(32),
      nasty(rng),
    ]);
  }
  if (rng.chance(0.4)) headers["x-event-key"] = rng.pick([keys.secretKey, "sk_x", nasty(rng)]);
  if (rng.chance(0.3)) headers["x-report-key"] = rng.pick([keys.reportKey, "rk_bad", nasty(rng)]);
  if (rng.chance(0.4)) {
    headers.origin = rng.pick(["https://demo.example", "null", "http://evil.example", nasty(rng)]);
  }
  if (rng.chance(0.2)) headers["if-none-match"] = rng.pick(['"abc"', "*", nasty(rng)]);
  if (rng.chance(0.2)) headers["x-forwarded-for"] = rng.pick(["1.2.3.4", "::1", nasty(rng)]);
  if (rng.chance(0.1)) headers["user-agent"] = rng.pick(["Googlebot/2.1", "", nasty(rng)]);
  if (rng.chance(0.05)) headers["x-big"] = "b".repeat(rng.pick([1_000, 8_000, 30_000]));
  if (rng.chance(0.03)) {
    for (let i = 0; i < rng.pick([40, 120]); i++) headers[`x-h${i}`] = String(i);
  }
  let body: Uint8Array | undefined;
  if (method !== "GET" && method !== "HEAD" && rng.chance(0.9)) {
    headers["content-type"] = rng.chance(0.8)
      ? rng.pick(CONTENT_TYPES.slice(0, 2))
      : rng.pick(CONTENT_TYPES);
    const kind = rng.int(10);
    if (kind < 6) body = encoder.encode(JSON.stringify(jsonBody(rng, path)));
    else if (kind === 6) {
      const text = JSON.stringify(jsonBody(rng, path));
      body = encoder.encode(text.slice(0, rng.int(text.length)));
    } else if (kind === 7) {
      body = crypto.getRandomValues(new Uint8Array(rng.int(2_000)));
    } else if (kind === 8) {
      body = encoder.encode(
        JSON.stringify({ pad: "p".repeat(rng.pick([8_200, 20_000, 300_000])) }),
      );
    } else body = encoder.encode(nasty(rng));
    if (rng.chance(0.1)) {
      headers["content-encoding"] = rng.pick(["gzip", "br", "deflate", "x-nope"]);
      if (headers["content-encoding"] === "gzip" && rng.chance(0.7)) body = await gzip(body);
    }
  }
  const roll = rng.next();
  const mode = roll < 0.02 ? "slow" : roll < 0.04 ? "cut" : roll < 0.1 ? "raw" : "fetch";
  if (mode === "slow" || mode === "cut") {
    body ??= encoder.encode(JSON.stringify(jsonBody(rng, path)));
  }
  if (mode === "fetch") {
    // fetch refuses to send what is not a byte string; raw requests send it as it is.
    for (const name of Object.keys(headers)) {
      headers[name] = headers[name].replace(/[^\x20-\x7e]/g, "?");
    }
    return { mode, method, path, headers, body };
  }
  return { mode, method: rng.pick([method, method, "G\u00c9T", "get"]), path, headers, body };
}

export interface Outcome {
  /** The status, or "no answer" (a cut upload the server closed), "error: ...". */
  status: number | string;
  contentType: string;
  body: string;
}

async function viaFetch(url: string, request: FuzzRequest): Promise<Outcome> {
  const answer = await fetch(url + request.path, {
    method: request.method,
    headers: request.headers,
    body: request.body as BodyInit | undefined,
    redirect: "manual",
    signal: AbortSignal.timeout(30_000),
  });
  const body = await answer.text();
  return { status: answer.status, contentType: answer.headers.get("content-type") ?? "", body };
}

const decoder = new TextDecoder();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One request written as bytes on its own connection (closed after the answer). */
async function viaSocket(url: string, request: FuzzRequest): Promise<Outcome> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const timer = setTimeout(() => conn.close(), 30_000);
  try {
    const body = request.body ?? new Uint8Array();
    const declared = request.mode === "cut" ? body.length + 500 : body.length;
    let head = `${request.method} ${request.path} HTTP/1.1\r\nhost: ${hostname}\r\n` +
      `connection: close\r\n`;
    if (request.method !== "GET" || body.length) head += `content-length: ${declared}\r\n`;
    for (const [name, value] of Object.entries(request.headers)) {
      head += `${name}: ${value.replace(/[\r\n]/g, "")}\r\n`;
    }
    const write = async (bytes: Uint8Array) => {
      let written = 0;
      while (written < bytes.length) written += await conn.write(bytes.subarray(written));
    };
    try {
      await write(encoder.encode(head + "\r\n"));
      if (request.mode === "slow") {
        const piece = Math.ceil(body.length / 4) || 1;
        for (let at = 0; at < body.length; at += piece) {
          await write(body.subarray(at, at + piece));
          await sleep(150);
        }
      } else {
        await write(body);
      }
      if (request.mode === "cut") await conn.closeWrite();
    } catch {
      // The server may answer and close before reading it all (a body too
      // large, a request line refused): its answer is still to be read.
    }
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(64 * 1024);
    while (true) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
    }
    const text = decoder.decode(new Uint8Array(await new Blob(chunks as BlobPart[]).arrayBuffer()));
    if (!text) return { status: "no answer", contentType: "", body: "" };
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? NaN);
    const end = text.indexOf("\r\n\r\n");
    const headText = end < 0 ? text : text.slice(0, end);
    let responseBody = end < 0 ? "" : text.slice(end + 4);
    if (/\r\ntransfer-encoding:\s*chunked/i.test(headText)) {
      let out = "";
      let rest = responseBody;
      while (rest) {
        const line = rest.indexOf("\r\n");
        const size = parseInt(rest.slice(0, line), 16);
        if (!size) break;
        out += rest.slice(line + 2, line + 2 + size);
        rest = rest.slice(line + 2 + size + 2);
      }
      responseBody = out;
    }
    const contentType = /\r\ncontent-type:\s*([^\r\n]*)/i.exec(headText)?.[1] ?? "";
    return {
      status: Number.isNaN(status) ? "unparsable answer" : status,
      contentType,
      body: responseBody,
    };
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer or the server */ }
  }
}

/** Whether a path is one of the public API's (whose errors must be JSON with a message). */
export function isPublicApi(path: string): boolean {
  return /^\/(content|marketing|stats)(\/|$|\?)/.test(path);
}

export interface Finding {
  request: { mode: string; method: string; path: string; headers: string[]; bodyBytes: number };
  outcome: Outcome;
  problem: string;
}

export interface FuzzResult {
  sent: number;
  byStatus: Record<string, number>;
  byMode: Record<string, number>;
  findings: Finding[];
  /** Problems by kind: "500", "error not JSON with message", "client error". */
  problems: Record<string, number>;
}

/**
 * Whether a request is well-formed HTTP/1.1 in its request line and header
 * values. Deno's HTTP parser refuses one that is not (a method that is not a
 * token, a control character in a header) with a bare 400 before any route
 * sees it: no JSON is owed there.
 */
export function validHttp(request: FuzzRequest): boolean {
  return /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(request.method) &&
    /^[\x21-\x7e]*$/.test(request.path) &&
    // Control characters are not allowed in a field value (RFC 9110 5.5).
    Object.values(request.headers).every((value) =>
      ![...value].some((c) => (c < " " && c !== "\t") || c === "\x7f")
    );
}

/** A problem with one answer, or undefined when it is acceptable. */
export function problemOf(request: FuzzRequest, outcome: Outcome): string | undefined {
  if (outcome.status === 500) return "500";
  if (typeof outcome.status !== "number") {
    // A cut upload may be closed without an answer; anything else must be answered.
    return request.mode === "cut" && outcome.status === "no answer"
      ? undefined
      : `no answer (${outcome.status})`;
  }
  if (outcome.status >= 500 && outcome.status !== 503) return `${outcome.status}`;
  if (
    outcome.status >= 400 && isPublicApi(request.path) && request.method !== "HEAD" &&
    validHttp(request)
  ) {
    try {
      const parsed = JSON.parse(outcome.body);
      if (typeof parsed?.message !== "string") return "error without message";
    } catch {
      return "error not JSON";
    }
  }
  return undefined;
}

/** Sends `count` generated requests from `concurrency` clients; nothing here throws. */
export async function fuzzHttp(
  options: {
    url: string;
    keys: Keys;
    count: number;
    seed: number;
    concurrency?: number;
    /** Kept up to date with the count of answered requests. */
    progress?: { sent: number };
  },
): Promise<FuzzResult> {
  const rng = seeded(options.seed);
  const result: FuzzResult = { sent: 0, byStatus: {}, byMode: {}, findings: [], problems: {} };
  const tally = (into: Record<string, number>, key: string | number) =>
    into[key] = (into[key] ?? 0) + 1;
  let next = 0;
  const worker = async () => {
    while (next < options.count) {
      next++;
      const request = await generateRequest(rng, options.keys);
      let outcome: Outcome;
      try {
        outcome = request.mode === "fetch"
          ? await viaFetch(options.url, request)
          : await viaSocket(options.url, request);
      } catch (error) {
        outcome = { status: `error: ${(error as Error).name}`, contentType: "", body: "" };
      }
      result.sent++;
      if (options.progress) options.progress.sent = result.sent;
      tally(result.byStatus, outcome.status);
      tally(result.byMode, request.mode);
      const problem = problemOf(request, outcome);
      if (problem) {
        tally(result.problems, problem);
        if (result.findings.length < 50) {
          result.findings.push({
            request: {
              mode: request.mode,
              method: request.method,
              path: request.path.slice(0, 300),
              headers: Object.keys(request.headers),
              bodyBytes: request.body?.length ?? 0,
            },
            outcome: { ...outcome, body: outcome.body.slice(0, 300) },
            problem,
          });
        }
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 16 }, worker));
  return result;
}

export interface FuzzTarget {
  url: string;
  keys: Keys;
  /** The process that serves (start.ts itself, not a task runner). */
  pid: number;
  storage: string;
  stop(): Promise<void>;
}

/**
 * `deno task start` with its demo site in a child process, on a fresh
 * Postgres database when DATABASE_URL is set (embedded PGlite otherwise),
 * with rate limits raised so that requests reach the routes behind them.
 */
export async function startFuzzTarget(): Promise<FuzzTarget> {
  const pg = DATABASE_URL ? await freshPostgresUrl() : undefined;
  const dataDir = await Deno.makeTempDir({ prefix: "crm-fuzz-" });
  const cleanup = async () => {
    await pg?.drop();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  };
  try {
    const system = await startTask([], {
      CRM_DATA_DIR: dataDir,
      DATABASE_URL: pg?.url ?? "",
      LOG_LEVEL: "error",
      ...RELAXED_LIMITS,
    }, { direct: true });
    return {
      url: system.url,
      keys: keysOfBanner(system.banner),
      pid: system.process.pid,
      storage: pg ? "a fresh Postgres database (DATABASE_URL)" : "embedded PGlite",
      async stop() {
        await system.stop();
        await cleanup();
      },
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * RSS is bounded when it stays under a ceiling and levels off: the caches
 * (responses, key resolutions, rate-limit windows) fill to their bounds
 * early in the run, and past its middle RSS may grow at most 10% more.
 */
const RSS_CEILING_MB = 512;
const RSS_LATE_GROWTH = 1.1;

export async function run(): Promise<BenchReport> {
  const count = Number(Deno.env.get("FUZZ_REQUESTS") ?? 100_000);
  const seed = Number(Deno.env.get("FUZZ_SEED") ?? 13);
  const target = await startFuzzTarget();
  const { url, pid, keys, storage } = target;
  try {
    // Warm-up: caches, pools and JIT settle before the RSS baseline.
    await fuzzHttp({ url, keys, count: 2_000, seed: seed + 1 });
    const rssStart = memoryMb(pid, "VmRSS");
    let rssPeak = rssStart;
    /** [requests answered so far, RSS MB], every second. */
    const samples: [number, number][] = [];
    const progress = { sent: 0 };
    const sampler = setInterval(() => {
      const now = memoryMb(pid, "VmRSS");
      rssPeak = Math.max(rssPeak, now);
      samples.push([progress.sent, now]);
    }, 1_000);
    const started = performance.now();
    const result = await fuzzHttp({ url, keys, count, seed, progress });
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const rssEnd = memoryMb(pid, "VmRSS");
    const health = await fetch(`${url}/healthz`);
    const healthy = health.status === 200;
    await health.body?.cancel();
    const read = await fetch(`${url}/content/v1/pages/home`, {
      headers: { "x-crm-key": keys.siteKey },
    });
    const readOk = read.status === 200;
    await read.body?.cancel();

    const problems = Object.entries(result.problems).map(([k, v]) => `${k}: ${v}`);
    const atHalf = samples.find(([sent]) => sent >= count / 2)?.[1] ?? rssStart;
    const rssOk = rssPeak <= RSS_CEILING_MB && rssEnd <= atHalf * RSS_LATE_GROWTH;
    const curve = samples.filter((_, i) => i % Math.max(1, Math.floor(samples.length / 10)) === 0)
      .map(([sent, mb]) => `${sent}: ${mb}`).join(", ");
    const failed = problems.length > 0 || !rssOk || !healthy || !readOk;
    const report: BenchReport = {
      name: "fuzz",
      description: `${result.sent} generated and mutated requests (seed ${seed}) against ` +
        "`deno task start`: routes from the gateway's list, mutated methods, paths, query " +
        "strings, headers, bodies, encodings and sizes; raw-socket, slow and cut uploads.",
      rows: Object.entries(result.byStatus).sort().map(([status, n]) => ({ status, answers: n })),
      notes: [
        `requests by mode: ${JSON.stringify(result.byMode)}; ${
          Math.round(result.sent / seconds)
        } req/s over ${Math.round(seconds)} s`,
        `problems (500s, non-JSON errors of the public routes, unanswered requests): ${
          problems.length ? problems.join(", ") : "none"
        }`,
        `RSS of the system process: ${rssStart} MB after warm-up, ${atHalf} MB at half the ` +
        `requests, peak ${rssPeak} MB, ${rssEnd} MB at the end (bound: ${RSS_CEILING_MB} MB, ` +
        `and at most +${Math.round((RSS_LATE_GROWTH - 1) * 100)}% from the half to the end): ` +
        `${rssOk ? "held" : "EXCEEDED"}; requests answered: MB ${curve}`,
        `afterwards: /healthz ${health.status}, hot page read ${read.status}`,
        `storage: ${storage}`,
        ...result.findings.slice(0, 10).map((f) => `finding: ${JSON.stringify(f)}`),
      ],
    };
    if (failed) {
      console.error(JSON.stringify(report, null, 2));
      throw new Error(`fuzz failed: ${problems.join(", ") || "see the notes"}`);
    }
    return report;
  } finally {
    await target.stop();
  }
}
