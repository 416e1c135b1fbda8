/**
 * The system as a cluster runs it, for the fault tests: the four services as
 * separate processes on a fresh Postgres database and Redis, the contract
 * example site imported, and Toxiproxy in front of whatever a test wants to
 * cut (Postgres, Redis, the services as the gateway sees them). Every process
 * listens on a port chosen once, so a test can stop, kill or restart one and
 * the others find it again at the same address.
 */
import { registerGateway } from "./openapi.ts";
import postgres from "postgres";
import { expect } from "vitest";
import { freshPostgresUrl } from "./storage.ts";
import { REDIS_URL, uniqueId } from "./env.ts";
import { freePort } from "./ports.ts";
import { type RunningProcess, runningServices, runTask, startService } from "./process.ts";
import { RELAXED_LIMITS } from "./system.ts";
import { type Proxy, startToxiproxy, type Toxiproxy } from "./toxiproxy.ts";

/** The keys of test/fixtures/contract-example.json (site "demo"). */
export const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
export const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";

export type ServiceName = "auth" | "content" | "ingest";
export type ProcessName = ServiceName | "gateway";
const SERVICES: ServiceName[] = ["auth", "content", "ingest"];

export interface FaultClusterOptions {
  /** Toxiproxy between the services and Postgres (proxies.postgres). */
  postgresProxy?: boolean;
  /** Toxiproxy between every process and Redis (proxies.redis). */
  redisProxy?: boolean;
  /** Toxiproxy between the gateway and each service (proxies.auth, .content, .ingest). */
  serviceProxies?: boolean;
  /** More settings for every process. */
  env?: Record<string, string>;
}

export interface FaultCluster {
  /** The gateway's URL (stable across restarts). */
  url: string;
  processes: Record<ProcessName, RunningProcess>;
  proxies: Partial<Record<ServiceName | "postgres" | "redis", Proxy>>;
  /** The prefix of every Redis key the system writes. */
  redisKeyPrefix: string;
  /** The database, reached directly (not through a proxy): to count what was stored. */
  sql: postgres.Sql;
  /** The settings the admin commands need to reach the services directly. */
  cli: Record<string, string>;
  /** Starts a process again (after stop or kill) on the same port and settings. */
  start(name: ProcessName): Promise<RunningProcess>;
  close(): Promise<void>;
}

export async function startFaultCluster(options: FaultClusterOptions = {}): Promise<FaultCluster> {
  if (!REDIS_URL) throw new Error("REDIS_URL is not set");
  const fresh = await freshPostgresUrl();
  let toxiproxy: Toxiproxy | undefined;
  const sql = postgres(fresh.url, { max: 2, onnotice: () => {} });
  let unregisterGateway = () => {};
  const close = async () => {
    unregisterGateway();
    for (const running of runningServices) await running.stop();
    await toxiproxy?.stop();
    await sql.end({ timeout: 1 }).catch(() => {});
    await fresh.drop();
  };
  try {
    toxiproxy = await startToxiproxy();
    const suffix = uniqueId("");
    const proxies: FaultCluster["proxies"] = {};
    let databaseUrl = fresh.url;
    if (options.postgresProxy) {
      const direct = new URL(fresh.url);
      proxies.postgres = await toxiproxy.proxy(
        `postgres_${suffix}`,
        `${direct.hostname}:${direct.port || 5432}`,
      );
      const viaProxy = new URL(fresh.url);
      viaProxy.host = proxies.postgres.listen;
      databaseUrl = viaProxy.toString();
    }
    let redisUrl = REDIS_URL;
    if (options.redisProxy) {
      const redis = new URL(REDIS_URL);
      proxies.redis = await toxiproxy.proxy(
        `redis_${suffix}`,
        `${redis.hostname}:${redis.port || 6379}`,
      );
      redisUrl = `redis://${proxies.redis.listen}`;
    }
    const redisKeyPrefix = `crmfault${suffix}:`;
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: redisKeyPrefix,
      ...RELAXED_LIMITS,
      ...options.env,
    };
    const migrated = await runTask(["admin", "migrate", "--database"], env);
    expect(migrated.code, migrated.stderr).toBe(0);

    const settings = {} as Record<ProcessName, Record<string, string>>;
    const direct = {} as Record<ServiceName, string>;
    const seen = {} as Record<ServiceName, string>;
    for (const name of SERVICES) {
      const port = freePort();
      settings[name] = { ...env, GRPC_PORT: String(port) };
      direct[name] = `http://127.0.0.1:${port}`;
      seen[name] = direct[name];
      if (options.serviceProxies) {
        proxies[name] = await toxiproxy.proxy(`${name}_${suffix}`, `127.0.0.1:${port}`);
        seen[name] = `http://${proxies[name]!.listen}`;
      }
    }
    const cli = {
      ...env,
      AUTH_URL: direct.auth,
      CONTENT_URL: direct.content,
      INGEST_URL: direct.ingest,
    };
    settings.gateway = {
      ...env,
      PORT: String(freePort()),
      AUTH_URL: seen.auth,
      CONTENT_URL: seen.content,
      INGEST_URL: seen.ingest,
    };
    const processes = {} as Record<ProcessName, RunningProcess>;
    const start = async (name: ProcessName) => {
      processes[name] = await startService(name, settings[name]);
      return processes[name];
    };
    for (const name of SERVICES) await start(name);
    const imported = await runTask(["admin", "import", "test/fixtures/contract-example.json"], cli);
    expect(imported.code, imported.stderr).toBe(0);
    unregisterGateway = registerGateway((await start("gateway")).url);
    return {
      url: processes.gateway.url,
      processes,
      proxies,
      redisKeyPrefix,
      sql,
      cli,
      start,
      close,
    };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}

/** Counts of answers by status (and the message of each error), e.g. { "200": 9, "503 service_unavailable": 3 }. */
export type Tally = Record<string, number>;

export function count(tally: Tally, key: string | number): void {
  tally[key] = (tally[key] ?? 0) + 1;
}

/**
 * What a client does with one answer: the status, with an error's JSON
 * `message` (an error without one is tallied as such, so a test sees it).
 */
export async function answerKey(answer: Response): Promise<string> {
  if (answer.status < 400) {
    await answer.body?.cancel();
    return String(answer.status);
  }
  const text = await answer.text();
  try {
    const message = JSON.parse(text).message;
    return typeof message === "string"
      ? `${answer.status} ${message}`
      : `${answer.status} no-message`;
  } catch {
    return `${answer.status} not-json`;
  }
}

export function sendEvent(url: string, eventId: string): Promise<Response> {
  return fetch(`${url}/marketing/event`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-event-key": SECRET_KEY },
    body: JSON.stringify({ name: "signup", event_id: eventId }),
  });
}

/** Rows stored per event id among `ids` (0 lost, 2+ doubled). */
export async function storedCounts(
  sql: postgres.Sql,
  ids: string[],
): Promise<Map<string, number>> {
  const rows = await sql<{ event_id: string; n: number }[]>`
    select event_id, count(*)::int as n from ingest.events
     where site_id = 'demo' and event_id = any(${ids}) group by event_id`;
  return new Map(rows.map((row) => [row.event_id, row.n]));
}
