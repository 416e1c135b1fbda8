/**
 * A Helm release of the umbrella chart on the real node (test/helpers/node.ts):
 * its objects through kubectl, helm in its namespace, the admin command line
 * through its services' ClusterIPs, and the checks the node tests share on a
 * load's result.
 */
import { expect } from "vitest";
import type postgres from "postgres";
import type { LoadResult, Node } from "./node.ts";
import { runCommand, type TaskResult } from "./process.ts";

// deno-lint-ignore no-explicit-any
export type Obj = any;

export const COMPONENTS = ["gateway", "auth", "content", "ingest"];

/** The newest Postgres programs of the machine (pg_dump, pg_restore, psql, createdb). */
function newestPgBin(): string {
  let versions: string[] = [];
  try {
    versions = [...Deno.readDirSync("/usr/lib/postgresql")].map((entry) => entry.name);
  } catch { /* none installed there */ }
  const newest = versions.sort((a, b) => Number(a) - Number(b)).at(-1);
  return newest ? `/usr/lib/postgresql/${newest}/bin` : "/usr/bin";
}
export const PG_BIN = newestPgBin();

/** This tree's admin command line, for scripts that change directory. */
const ADMIN_CLI = new URL("../../services/cli/admin.ts", import.meta.url).pathname;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 250 ms until it resolves true (a throw counts as false). */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

export const isReady = (pod: Obj): boolean =>
  pod.status.conditions?.some((c: Obj) => c.type === "Ready" && c.status === "True") ?? false;

export const componentOf = (pod: Obj): string => pod.metadata.labels["app.kubernetes.io/component"];

/** Each step's time, printed as it ends and listed at the end of the run. */
export const timings: [string, number][] = [];
export async function timed<T>(step: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    const ms = Math.round(performance.now() - started);
    timings.push([step, ms]);
    console.log(`realnode: ${step}: ${ms} ms`);
  }
}

export type PodsByComponent = Record<string, { names: string[]; checksums: string[] }>;

/** The pods of `changed` all replaced with a new checksum/secrets, the others untouched. */
export function expectRolled(
  before: PodsByComponent,
  after: PodsByComponent,
  changed: string[],
): void {
  for (const component of COMPONENTS) {
    const [was, now] = [before[component], after[component]];
    if (changed.includes(component)) {
      expect(now.names.filter((n) => was.names.includes(n)), component).toEqual([]);
      expect(now.checksums.filter((c) => was.checksums.includes(c)), component).toEqual([]);
    } else {
      expect(now.names.toSorted(), component).toEqual(was.names.toSorted());
      expect(new Set(now.checksums), component).toEqual(new Set(was.checksums));
    }
  }
}

export class NodeRelease {
  constructor(
    readonly node: Node,
    readonly namespace: string,
    readonly name: string,
  ) {}

  kubectl(args: string[], input?: string): Promise<string> {
    return this.node.kubectl(args, input);
  }

  async getJson(args: string[]): Promise<Obj> {
    return JSON.parse(await this.kubectl([...args, "-o", "json"]));
  }

  /** `helm ARGS -n NAMESPACE`; its output, or a throw naming what it printed. */
  async helm(args: string[]): Promise<string> {
    const out = await this.node.helm([...args, "-n", this.namespace]);
    if (out.code !== 0) throw new Error(`helm ${args[0]}: ${out.stdout}${out.stderr}`);
    return out.stdout;
  }

  async deployments(): Promise<Obj[]> {
    return (await this.getJson(["get", "deployments", "-n", this.namespace])).items;
  }

  /** The pods of the four services (not the admin pods). */
  async servicePods(component?: string): Promise<Obj[]> {
    const selector = `app.kubernetes.io/instance=${this.name},app.kubernetes.io/component` +
      (component ? `=${component}` : "!=admin");
    return (await this.getJson(["get", "pods", "-n", this.namespace, "-l", selector])).items;
  }

  /** Every Deployment rolled out: its generation observed, every replica updated and ready. */
  async allReady(): Promise<boolean> {
    const all = await this.deployments();
    return all.length === COMPONENTS.length &&
      all.every((d) =>
        d.status.observedGeneration === d.metadata.generation &&
        d.status.readyReplicas === d.spec.replicas &&
        d.status.updatedReplicas === d.spec.replicas &&
        (d.status.replicas ?? 0) === d.spec.replicas
      );
  }

  /** The Services' ClusterIP URLs by name (`crm-gateway`: `http://198.19.0.x:8080`). */
  async services(): Promise<Record<string, string>> {
    return Object.fromEntries(
      (await this.getJson(["get", "services", "-n", this.namespace])).items.map((
        s: Obj,
      ) => [s.metadata.name, `http://${s.spec.clusterIP}:${s.spec.ports[0].port}`]),
    );
  }

  /** The release's Secret's settings, decoded. */
  async secretSettings(): Promise<Record<string, string>> {
    const secret = await this.getJson([
      "get",
      "secret",
      "-n",
      this.namespace,
      `${this.name}-crm-connection`,
    ]);
    return Object.fromEntries(
      Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, atob(v)]),
    );
  }

  /** The admin token the release's Secret holds. */
  async adminToken(): Promise<string> {
    return (await this.secretSettings())["admin-token"];
  }

  /** The environment of `deno task admin` through the services' Services, with `token`. */
  async adminEnv(token: string): Promise<Record<string, string>> {
    const services = await this.services();
    return {
      AUTH_URL: services[`${this.name}-auth`],
      CONTENT_URL: services[`${this.name}-content`],
      INGEST_URL: services[`${this.name}-ingest`],
      ADMIN_TOKEN: token,
      LOG_LEVEL: "error",
    };
  }

  /**
   * `deno task admin ARGS` from this machine through the services' Services,
   * with `token` as ADMIN_TOKEN; `cwd`: another tree's command line.
   */
  async admin(args: string[], token: string, cwd?: string): Promise<TaskResult> {
    return await runCommand(Deno.execPath(), ["run", "-A", "services/cli/admin.ts", ...args], {
      cwd,
      env: await this.adminEnv(token),
    });
  }

  /**
   * A bash script as an operator types it, where `admin` is `deno task
   * admin` through the services' Services with `token`; `$1`... are `args`.
   * Throws when it fails.
   */
  async adminScript(script: string, token: string, args: string[] = []): Promise<string> {
    const prelude =
      `set -euo pipefail\nadmin() { "${Deno.execPath()}" run -A "${ADMIN_CLI}" "$@"; }\n`;
    const out = await runCommand("bash", ["-c", prelude + script, "script", ...args], {
      env: { ...(await this.adminEnv(token)), PATH: `${PG_BIN}:${Deno.env.get("PATH")}` },
    });
    if (out.code !== 0) throw new Error(`${script}\nfailed: ${out.stderr}`);
    return out.stdout;
  }

  /** Each service pod's name and checksum/secrets annotation, by component. */
  async podsByComponent(): Promise<PodsByComponent> {
    const seen: PodsByComponent = {};
    for (const pod of await this.servicePods()) {
      const entry = seen[componentOf(pod)] ??= { names: [], checksums: [] };
      entry.names.push(pod.metadata.name);
      entry.checksums.push(pod.metadata.annotations["checksum/secrets"]);
    }
    return seen;
  }

  /**
   * The host's process id of a pod's (first) container's first process:
   * inside the container it is PID 1, which the kernel shields from signals
   * sent from there.
   */
  async hostPid(pod: Obj): Promise<number> {
    const id = pod.status.containerStatuses[0].containerID.replace("containerd://", "");
    const task = (await this.node.ctr(["tasks", "ls"])).split("\n")
      .map((line) => line.trim().split(/\s+/)).find(([taskId]) => taskId === id);
    if (!task) {
      throw new Error(`container ${id} of ${pod.metadata.name} not among containerd's tasks`);
    }
    return Number(task[1]);
  }

  /**
   * Stops (SIGSTOP, from the host) the service process of one pod of each
   * component; resolves once the kubelet has restarted each container after
   * its liveness probe failed (an `Unhealthy` event says so) and the pod is
   * Ready again.
   */
  async stopUntilRestarted(components: string[]): Promise<void> {
    const victims = [];
    for (const component of components) {
      const [pod] = await this.servicePods(component);
      Deno.kill(await this.hostPid(pod), "SIGSTOP");
      const restarts = pod.status.containerStatuses[0].restartCount;
      victims.push({ component, name: pod.metadata.name, restarts });
    }
    for (const victim of victims) {
      await waitUntil(`${victim.component} restarted and Ready`, async () => {
        const pod = await this.getJson(["get", "pod", "-n", this.namespace, victim.name]);
        return pod.status.containerStatuses[0].restartCount > victim.restarts && isReady(pod);
      }, 180_000);
      const events = (await this.getJson([
        "get",
        "events",
        "-n",
        this.namespace,
        "--field-selector",
        `involvedObject.name=${victim.name},reason=Unhealthy`,
      ])).items.map((e: Obj) => e.message as string);
      expect(events.some((m: string) => m.startsWith("Liveness probe failed")), victim.name)
        .toBe(true);
    }
  }

  /** `deno eval CODE` in a pod; the last line it printed, as JSON. */
  async evalIn(pod: string, code: string): Promise<Obj> {
    const out = await this.kubectl(["exec", "-n", this.namespace, pod, "--", "deno", "eval", code]);
    return JSON.parse(out.trim().split("\n").at(-1)!);
  }
}

/** One line of what a load saw, as every step under load prints it. */
export function report(what: string, load: LoadResult): void {
  console.log(
    `realnode: ${what}: ${load.reads} reads (${load.readFailures.length} failed), ` +
      `${load.eventRequests} event requests, ${load.acked.length} acknowledged, ` +
      `${load.unavailable} answered 503 and retried (window ${load.unavailableWindowMs} ms), ` +
      `${load.eventFailures.length} failed, ${load.connectionRetries.length} sent again after ` +
      `a connection failed (${load.connectionRetries.join("; ")}), in ${load.ms} ms`,
  );
}

/** The ids of `prefix` stored in `sql`'s ingest.events, with how often each is. */
export async function storedEvents(
  sql: ReturnType<typeof postgres>,
  prefix: string,
): Promise<Map<string, number>> {
  const rows = await sql<{ event_id: string; n: number }[]>`
    SELECT event_id, count(*)::int AS n FROM ingest.events
    WHERE site_id = 'demo' AND event_id LIKE ${prefix + "-%"} GROUP BY event_id`;
  return new Map(rows.map((r) => [r.event_id, r.n]));
}

/** Every acknowledged id stored exactly once, nothing stored that was not acknowledged. */
export async function expectStoredOnce(
  sql: ReturnType<typeof postgres>,
  load: LoadResult,
  prefix: string,
): Promise<void> {
  const stored = await storedEvents(sql, prefix);
  expect([...stored].filter(([, n]) => n !== 1)).toEqual([]);
  expect([...stored.keys()].sort()).toEqual([...load.acked].sort());
}

/**
 * A connection fails before its answer at most once per client connection
 * and stopping gateway: more means requests are lost some other way.
 */
export function expectRetriesBounded(load: LoadResult, gatewaysStopped: number): void {
  expect(load.connectionRetries.length, load.connectionRetries.join("\n"))
    .toBeLessThanOrEqual(load.connections * gatewaysStopped);
}

/** A load that lost nothing: no failed read or event, at least `reads` reads and `acked` events. */
export function expectNothingLost(load: LoadResult, least = { reads: 50, acked: 20 }): void {
  expect(load.reads).toBeGreaterThan(least.reads);
  expect(load.acked.length).toBeGreaterThan(least.acked);
  expect(load.readFailures).toEqual([]);
  expect(load.eventFailures).toEqual([]);
}

/**
 * Code for `deno eval` in a pod: prints as JSON every environment variable
 * (`env`), the container's first process's (`init`), every file under the
 * secrets' and config mounts, following the projected volumes'
 * links (`files`), and whether a TCP connection to `to` opens (`postgres`:
 * "open" or why not).
 */
export const secretsProbe = (to: { hostname: string; port: number }): string =>
  `const files = {};
  const walk = (dir) => {
    let entries = [];
    try { entries = [...Deno.readDirSync(dir)]; } catch { return; }
    for (const e of entries) {
      const path = dir + "/" + e.name;
      let stat;
      try { stat = Deno.statSync(path); } catch { continue; }
      if (stat.isDirectory) walk(path);
      else try { files[path] = Deno.readTextFileSync(path); } catch (err) { files[path] = "unreadable " + err.name; }
    }
  };
  for (const dir of ["/var/run/secrets", "/etc/crm"]) walk(dir);
  let init = "";
  try { init = Deno.readTextFileSync("/proc/1/environ"); } catch (err) { init = "unreadable " + err.name; }
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), 3000));
  let postgres = "open";
  try { (await Promise.race([Deno.connect({ hostname: "${to.hostname}", port: ${to.port} }), timeout])).close(); }
  catch (err) { postgres = String(err.message).slice(0, 80); }
  console.log(JSON.stringify({ env: Deno.env.toObject(), init, files, postgres }));
  Deno.exit(0);`;
