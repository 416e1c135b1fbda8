/**
 * The umbrella chart on a real Kubernetes node (deploy/node/up.sh): real
 * containers under containerd and runc, real probes, kube-proxy Services,
 * NetworkPolicies enforced by kube-router, CoreDNS; the node's own Postgres
 * and Redis on the node address. Proves the install (migration Job, every
 * Deployment Ready, hardened pods, `helm test`), the contract through the
 * gateway's Service, the policies from an unlabelled pod, the gateway's
 * readiness with ingest gone, and that an upgrade and the loss of a pod of
 * each service under load lose no read and no acknowledged event. The node
 * goes down at the end, and the host must be as it was (down.sh checks).
 *
 * Needs root and the tools of .ci/tools.sh (`kube etcd node helm podman`):
 * `deno task test:node`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { canRunNode, type LoadResult, type Node, startLoad, startNode } from "./helpers/node.ts";
import { buildImage } from "./helpers/podman.ts";
import { runCommand } from "./helpers/process.ts";

const NAMESPACE = "crm-test";
const RELEASE = "crm";
const VALUES = "test/fixtures/realnode/values.yaml";
const MANIFEST = "test/fixtures/contract-example.json";
const KEYS = {
  site: "pk_0123456789abcdef0123456789abcdef",
  secret: "sk_0123456789abcdef0123456789abcdef0123456789abcdef",
};
const COMPONENTS = ["gateway", "auth", "content", "ingest"];

// deno-lint-ignore no-explicit-any
type Obj = any;

const timings: [string, number][] = [];
async function timed<T>(step: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    const ms = Math.round(performance.now() - started);
    timings.push([step, ms]);
    console.log(`realnode: ${step}: ${ms} ms`);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(canRunNode())("the umbrella chart on a real node", () => {
  let node: Node;
  let gateway = "";
  let sql: ReturnType<typeof postgres>;

  const kubectl = (args: string[], input?: string) => node.kubectl(args, input);
  const getJson = async (args: string[]) => JSON.parse(await kubectl([...args, "-o", "json"]));
  const deployments = async () =>
    (await getJson(["get", "deployments", "-n", NAMESPACE])).items as Obj[];
  const servicePods = async () =>
    (await getJson([
      "get",
      "pods",
      "-n",
      NAMESPACE,
      "-l",
      `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component!=admin`,
    ])).items as Obj[];
  const ready = (pod: Obj) =>
    pod.status.conditions?.some((c: Obj) => c.type === "Ready" && c.status === "True") ?? false;
  const allReady = async () => {
    const all = await deployments();
    return all.length === COMPONENTS.length &&
      all.every((d) =>
        d.status.observedGeneration === d.metadata.generation &&
        d.status.readyReplicas === d.spec.replicas &&
        d.status.updatedReplicas === d.spec.replicas &&
        (d.status.replicas ?? 0) === d.spec.replicas
      );
  };
  const waitUntil = async (what: string, check: () => Promise<boolean>, timeoutMs = 120_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(250);
    }
  };
  const helm = async (args: string[]) => {
    const out = await node.helm([...args, "-n", NAMESPACE]);
    expect(out.code, `helm ${args[0]}: ${out.stdout}${out.stderr}`).toBe(0);
    return out.stdout;
  };
  /** Every acknowledged id stored exactly once, nothing stored that was not acknowledged. */
  const expectStoredOnce = async (load: LoadResult, prefix: string) => {
    const rows = await sql<{ event_id: string; n: number }[]>`
      SELECT event_id, count(*)::int AS n FROM ingest.events
      WHERE site_id = 'demo' AND event_id LIKE ${prefix + "-%"} GROUP BY event_id`;
    expect(rows.filter((r) => r.n !== 1)).toEqual([]);
    expect(rows.map((r) => r.event_id).sort()).toEqual([...load.acked].sort());
  };
  let adminToken = "";
  const secretToken = async () =>
    (await getJson(["get", "secret", "-n", NAMESPACE, `${RELEASE}-crm-connection`])).data[
      "admin-token"
    ] as string;
  const report = (what: string, load: LoadResult) =>
    console.log(
      `realnode: ${what}: ${load.reads} reads (${load.readFailures.length} failed), ` +
        `${load.eventRequests} event requests, ${load.acked.length} acknowledged, ` +
        `${load.unavailable} answered 503 and retried (window ${load.unavailableWindowMs} ms), ` +
        `${load.eventFailures.length} failed, ${load.connectionRetries.length} sent again after ` +
        `a connection failed (${load.connectionRetries.join("; ")}), in ${load.ms} ms`,
    );
  /**
   * A connection fails before its answer at most once per client connection
   * and stopping gateway: more means requests are lost some other way.
   */
  const expectRetriesBounded = (load: LoadResult, gatewaysStopped: number) =>
    expect(load.connectionRetries.length, load.connectionRetries.join("\n"))
      .toBeLessThanOrEqual(load.connections * gatewaysStopped);

  beforeAll(async () => {
    await timed("image (deno task image)", buildImage);
    node = await timed("node up (deploy/node/up.sh)", () => startNode("/tmp/crm-node-test"));
    console.log(node.timings);
    sql = postgres(node.databaseUrl, { max: 2, onnotice: () => {} });
  }, 600_000);

  afterAll(async () => {
    await sql?.end();
    if (!node) return;
    const down = await timed("node down (deploy/node/down.sh)", node.down);
    console.log(down.stderr);
    console.log(
      `realnode: timings\n${timings.map(([s, ms]) => `  ${s.padEnd(48)} ${ms} ms`).join("\n")}`,
    );
    if (down.code !== 0) throw new Error(`deploy/node/down.sh left things behind:\n${down.stderr}`);
  }, 240_000);

  it(
    "installs: the migration Job completes, every Deployment Ready through real probes, pods hardened",
    async () => {
      const out = await timed("helm install --wait", () =>
        helm([
          "install",
          RELEASE,
          "helm/crm",
          "--create-namespace",
          "--wait=watcher",
          "--timeout",
          "5m",
          "-f",
          VALUES,
        ]));
      expect(out).toContain(`crm dev is installed as release ${RELEASE}`);
      const jobEvents = (await getJson([
        "get",
        "events",
        "-n",
        NAMESPACE,
        "--field-selector",
        `involvedObject.kind=Job,involvedObject.name=${RELEASE}-migrate`,
      ])).items.map((e: Obj) => e.reason);
      expect(jobEvents).toContain("Completed");
      expect(await allReady()).toBe(true);
      const pods = await servicePods();
      expect(pods.map((p) => p.metadata.labels["app.kubernetes.io/component"]).sort()).toEqual(
        ["auth", "content", "gateway", "gateway", "ingest"],
      );
      for (const pod of pods) {
        expect(pod.spec.nodeName).toBe("crm-node");
        expect(ready(pod), pod.metadata.name).toBe(true);
        expect(pod.status.podIP).toMatch(/^198\.18\.0\.\d+$/);
      }
      const policies = (await getJson(["get", "networkpolicies", "-n", NAMESPACE])).items
        .map((p: Obj) => p.metadata.name).sort();
      expect(policies).toEqual([
        "crm-admin",
        "crm-auth",
        "crm-content",
        "crm-default-deny",
        "crm-gateway",
        "crm-ingest",
      ]);
      const cronJobs = (await getJson(["get", "cronjobs", "-n", NAMESPACE])).items;
      expect(cronJobs.map((c: Obj) => c.spec.schedule)).toEqual(["17 3 * * *"]);
      adminToken = await secretToken();
      expect(atob(adminToken)).toMatch(/^[A-Za-z0-9]{40}$/);
      // The start-up line names the address the service really listens on.
      for (const pod of pods) {
        const component = pod.metadata.labels["app.kubernetes.io/component"];
        const logs = await kubectl(["logs", "-n", NAMESPACE, pod.metadata.name]);
        const port = component === "gateway" ? 8080 : 50051;
        expect(logs).toContain(`${component} listening on http://0.0.0.0:${port}`);
      }
      // Inside a running container: the uid the chart asks for, and a root it cannot write.
      const inside = await timed("exec into each service", async () => {
        const seen: Obj[] = [];
        for (const pod of pods) {
          const code = `let root = "writable";
          try { Deno.writeTextFileSync("/app/probe", "x"); } catch (e) { root = e.message; }
          console.log(JSON.stringify({ uid: Deno.uid(), gid: Deno.gid(), root }));`;
          const out = await kubectl([
            "exec",
            "-n",
            NAMESPACE,
            pod.metadata.name,
            "--",
            "deno",
            "eval",
            code,
          ]);
          seen.push(JSON.parse(out.trim().split("\n").at(-1)!));
        }
        return seen;
      });
      for (const seen of inside) {
        expect(seen.uid).toBe(10001);
        expect(seen.gid).toBe(10001);
        expect(seen.root).toMatch(/Read-only file system/);
      }
    },
    400_000,
  );

  it("passes helm test", async () => {
    const out = await timed("helm test", () => helm(["test", RELEASE, "--timeout", "2m"]));
    expect(out).toMatch(/TEST SUITE:\s+crm-test-healthz[\s\S]*Phase:\s+Succeeded/);
  }, 150_000);

  it("answers a page read and stores a server event through the gateway's Service", async () => {
    const services = Object.fromEntries(
      (await getJson(["get", "services", "-n", NAMESPACE])).items.map((
        s: Obj,
      ) => [s.metadata.name, `http://${s.spec.clusterIP}:${s.spec.ports[0].port}`]),
    );
    gateway = services[`${RELEASE}-gateway`];
    expect(gateway).toMatch(/^http:\/\/198\.19\.0\.\d+:8080$/);
    // The admin command line from this machine, through the services' own Services.
    const imported = await timed(
      "admin import",
      () =>
        runCommand(Deno.execPath(), ["run", "-A", "services/cli/admin.ts", "import", MANIFEST], {
          env: {
            AUTH_URL: services[`${RELEASE}-auth`],
            CONTENT_URL: services[`${RELEASE}-content`],
            INGEST_URL: services[`${RELEASE}-ingest`],
            ADMIN_TOKEN: atob(adminToken),
            LOG_LEVEL: "error",
          },
        }),
    );
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout).site).toBe("demo");

    const page = await fetch(`${gateway}/content/v1/pages/home`, {
      headers: { "x-crm-key": KEYS.site },
    });
    expect(page.status).toBe(200);
    expect((await page.json()).marker).toBe("home");
    const eventId = `realnode-first-${crypto.randomUUID()}`;
    const event = await fetch(`${gateway}/marketing/event`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-event-key": KEYS.secret },
      body: JSON.stringify({ name: "signup", event_id: eventId }),
    });
    expect(await event.json()).toEqual({ ok: true, duplicate: false });
    const rows = await sql`SELECT name, source FROM ingest.events WHERE event_id = ${eventId}`;
    expect(rows.map((r) => ({ ...r }))).toEqual([{ name: "signup", source: "server" }]);
  }, 120_000);

  it(
    "lets a pod without the chart's labels reach the gateway and none of the gRPC ports",
    async () => {
      const targets = COMPONENTS.map((c) => [
        c,
        `${RELEASE}-${c}.${NAMESPACE}.svc.cluster.local`,
        c === "gateway" ? 8080 : 50051,
      ]);
      const code = `const seen = {};
      for (const [name, hostname, port] of ${JSON.stringify(targets)}) {
        const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), 3000));
        try {
          (await Promise.race([Deno.connect({ hostname, port }), timeout])).close();
          seen[name] = "open";
        } catch (e) { seen[name] = String(e.message).slice(0, 60); }
      }
      const livez = await fetch("http://${RELEASE}-gateway.${NAMESPACE}.svc.cluster.local:8080/livez");
      seen.livez = livez.status;
      console.log(JSON.stringify(seen));
      Deno.exit(0);`;
      const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "outsider", namespace: "crm-probe", labels: { app: "outsider" } },
        spec: {
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 1,
          securityContext: { runAsNonRoot: true, runAsUser: 10001 },
          containers: [{
            name: "probe",
            image: "localhost/crm:dev",
            imagePullPolicy: "Never",
            command: ["deno", "eval", code],
            env: [{ name: "DENO_DIR", value: "/tmp/deno" }],
            volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
          }],
          volumes: [{ name: "tmp", emptyDir: {} }],
        },
      };
      const seen = await timed("unlabelled pod's reach", async () => {
        await kubectl(["create", "namespace", "crm-probe"]);
        await kubectl(["apply", "-f", "-"], JSON.stringify(pod));
        await waitUntil("the outsider pod to finish", async () => {
          const phase = (await getJson(["get", "pod", "-n", "crm-probe", "outsider"])).status.phase;
          return phase === "Succeeded" || phase === "Failed";
        }, 60_000);
        return JSON.parse(
          (await kubectl(["logs", "-n", "crm-probe", "outsider"])).trim().split("\n").at(-1)!,
        );
      });
      console.log(`realnode: outsider saw ${JSON.stringify(seen)}`);
      expect(seen.gateway).toBe("open");
      expect(seen.livez).toBe(200);
      for (const c of ["auth", "content", "ingest"]) expect(seen[c], c).not.toBe("open");
      await kubectl(["delete", "namespace", "crm-probe", "--wait=false"]);
    },
    120_000,
  );

  it("keeps the gateways Ready and cached reads answering with ingest scaled to 0", async () => {
    await timed("ingest scaled to 0", async () => {
      await kubectl(["scale", "deployment", `${RELEASE}-ingest`, "-n", NAMESPACE, "--replicas=0"]);
      await waitUntil(
        "no ingest pod",
        async () =>
          (await servicePods()).every((p) =>
            p.metadata.labels["app.kubernetes.io/component"] !== "ingest"
          ),
      );
    });
    // Longer than the readiness probe's period times its failure threshold (5 s x 2).
    const until = Date.now() + 15_000;
    let reads = 0;
    let health: Obj = {};
    while (Date.now() < until) {
      const page = await fetch(`${gateway}/content/v1/pages/home`, {
        headers: { "x-crm-key": KEYS.site },
      });
      expect(page.status).toBe(200);
      expect((await page.json()).marker).toBe("home");
      reads++;
      const healthz = await fetch(`${gateway}/healthz`);
      expect(healthz.status).toBe(200);
      health = await healthz.json();
      await sleep(200);
    }
    expect(health.status).toBe("degraded");
    expect(health.services.ingest).not.toBe("SERVING");
    const gateways = (await servicePods()).filter((p) =>
      p.metadata.labels["app.kubernetes.io/component"] === "gateway"
    );
    expect(gateways).toHaveLength(2);
    for (const pod of gateways) expect(ready(pod), pod.metadata.name).toBe(true);
    console.log(`realnode: ${reads} reads answered 200 with ingest at 0, health ${health.status}`);
    await timed("ingest scaled back to 1", async () => {
      await kubectl(["scale", "deployment", `${RELEASE}-ingest`, "-n", NAMESPACE, "--replicas=1"]);
      await waitUntil("ingest ready again", allReady);
    });
  }, 180_000);

  it("upgrades under load: no read fails, every acknowledged event stored once", async () => {
    const prefix = `upgrade-${crypto.randomUUID().slice(0, 8)}`;
    const load = startLoad(gateway, KEYS, prefix);
    await sleep(1000);
    await timed("helm upgrade --wait under load", () =>
      helm([
        "upgrade",
        RELEASE,
        "helm/crm",
        "--wait=watcher",
        "--timeout",
        "5m",
        "-f",
        VALUES,
        "--set",
        "global.logLevel=debug",
      ]));
    await waitUntil("the rollout to settle", allReady);
    await sleep(1000);
    const result = await load.stop();
    report("upgrade", result);
    const env = (await deployments())[0].spec.template.spec.containers[0].env;
    expect(env.find((e: Obj) => e.name === "LOG_LEVEL").value).toBe("debug");
    // The generated admin token survives the upgrade.
    expect(await secretToken()).toBe(adminToken);
    expect(result.reads).toBeGreaterThan(50);
    expect(result.acked.length).toBeGreaterThan(20);
    expect(result.readFailures).toEqual([]);
    expect(result.eventFailures).toEqual([]);
    expectRetriesBounded(result, 2);
    await expectStoredOnce(result, prefix);
  }, 400_000);

  it(
    "loses a pod of each service under load: no read fails, events 503 only while ingest has no ready pod",
    async () => {
      const prefix = `delete-${crypto.randomUUID().slice(0, 8)}`;
      const load = startLoad(gateway, KEYS, prefix);
      await sleep(1000);
      for (const component of COMPONENTS) {
        await timed(`${component} pod deleted and replaced under load`, async () => {
          const victim = (await servicePods()).find((p) =>
            p.metadata.labels["app.kubernetes.io/component"] === component
          )!;
          await kubectl(["delete", "pod", "-n", NAMESPACE, victim.metadata.name, "--wait=false"]);
          await waitUntil(`${component} replaced`, async () =>
            (await allReady()) &&
            (await servicePods()).every((p) => p.metadata.name !== victim.metadata.name));
        });
      }
      await sleep(1000);
      const result = await load.stop();
      report("pod deletions", result);
      expect(result.reads).toBeGreaterThan(50);
      expect(result.readFailures).toEqual([]);
      expect(result.eventFailures).toEqual([]);
      // One ingest pod: from its deletion until its replacement is ready, events answer 503.
      expect(result.unavailableWindowMs).toBeLessThan(60_000);
      expectRetriesBounded(result, 1);
      await expectStoredOnce(result, prefix);
    },
    400_000,
  );

  it("uninstalls, leaving nothing of the release behind", async () => {
    await timed(
      "helm uninstall --wait",
      () => helm(["uninstall", RELEASE, "--wait", "--timeout", "2m"]),
    );
    const kinds = "deployments,replicasets,pods,services,secrets,configmaps,jobs,cronjobs," +
      "networkpolicies,poddisruptionbudgets,horizontalpodautoscalers";
    const left = async () =>
      (await getJson([
        "get",
        kinds,
        "-n",
        NAMESPACE,
        "-l",
        `app.kubernetes.io/instance=${RELEASE}`,
      ])).items.map((o: Obj) => `${o.kind}/${o.metadata.name}`);
    // Garbage collection of the release's objects takes a few seconds.
    await expect.poll(left, { timeout: 60_000, interval: 1000 }).toEqual([]);
  }, 150_000);
});
