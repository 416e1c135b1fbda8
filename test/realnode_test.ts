/**
 * The umbrella chart on a real Kubernetes node (deploy/node/up.sh): real
 * containers under containerd and runc, real probes, kube-proxy Services,
 * NetworkPolicies enforced by kube-router, CoreDNS; the node's own Postgres
 * and Redis on the node address. Proves the install (migration Job, every
 * Deployment Ready, hardened pods, `helm test`), the contract through the
 * gateway's Service, the policies from an unlabelled pod, no secret and no
 * Postgres for the gateway, the gateway's readiness with ingest gone, that
 * an upgrade and the loss of a pod of each service under load lose no read
 * and no acknowledged event, that a stopped process is restarted by its
 * liveness probe, the admin token's rotation with admin calls going on and
 * only the pods that read a changed secret rolling, stable `helm template`
 * output, docs/upgrades.md's restore procedure on a dump taken under load,
 * and the upgrade from the previous release's image and chart and the
 * rollback to it under load. The node goes down at the end, and the host
 * must be as it was (down.sh checks).
 *
 * Needs root and the tools of .ci/tools.sh (`kube etcd node helm podman`):
 * `deno task test:node`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { canRunNode, type Node, NODE_IP, startLoad, startNode } from "./helpers/node.ts";
import {
  componentOf,
  COMPONENTS,
  expectNothingLost,
  expectRetriesBounded,
  expectRolled,
  expectStoredOnce,
  isReady as ready,
  NodeRelease,
  type Obj,
  type PodsByComponent,
  report,
  secretsProbe,
  sleep,
  storedEvents,
  timed,
  timings,
  waitUntil,
} from "./helpers/node_release.ts";
import { preparePreviousRelease, type PreviousRelease } from "./helpers/previous_release.ts";
import * as restore from "./helpers/restore_drill.ts";
import { type Receiver, startReceiver } from "./helpers/webhook_receiver.ts";
import { buildImage } from "./helpers/podman.ts";

const NAMESPACE = "crm-test";
const RELEASE = "crm";
const VALUES = "test/fixtures/realnode/values.yaml";
const MANIFEST = "test/fixtures/contract-example.json";
const KEYS = {
  site: "pk_0123456789abcdef0123456789abcdef",
  secret: "sk_0123456789abcdef0123456789abcdef0123456789abcdef",
};
/** The receiver of the restore drill's webhooks, on the node's address (the chart's egress allows it). */
const WEBHOOK_PORT = 28080;
const WEBHOOK_SECRET = `whsec_${
  btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
}`;

describe.runIf(canRunNode())("the umbrella chart on a real node", () => {
  let node: Node;
  let release: NodeRelease;
  let previous: PreviousRelease | undefined;
  let receiver: Receiver | undefined;
  let gateway = "";
  let sql: ReturnType<typeof postgres>;
  /** The admin token the services accept now (the generated one, until the rotation). */
  let adminToken = "";

  const kubectl = (args: string[], input?: string) => node.kubectl(args, input);
  const getJson = (args: string[]) => release.getJson(args);
  const deployments = () => release.deployments();
  const servicePods = (component?: string) => release.servicePods(component);
  const allReady = () => release.allReady();
  const helm = (args: string[]) => release.helm(args);
  const secretToken = () => release.adminToken();
  const podsByComponent = () => release.podsByComponent();
  /**
   * Once the rollout is done and the replaced pods are gone: those of `changed` all new, with
   * a new checksum/secrets, the others as they were.
   */
  const settled = async (before: PodsByComponent, changed: string[]) => {
    await waitUntil("the rollout to settle and the replaced pods to go", async () => {
      const now = await podsByComponent();
      return (await allReady()) &&
        changed.every((c) => now[c].names.every((n) => !before[c].names.includes(n)));
    });
    expectRolled(before, await podsByComponent(), changed);
  };
  /** `helm upgrade` to this tree's chart with the node's values and `sets`. */
  const upgradeToThisChart = (sets: string[]) =>
    helm([
      "upgrade",
      RELEASE,
      "helm/crm",
      "--wait=watcher",
      "--timeout",
      "5m",
      "-f",
      VALUES,
      ...sets.flatMap((set) => ["--set", set]),
    ]);
  /**
   * `change` under the load of reads and events (ids starting with `prefix`), the rollout
   * settled: no read or event failed, each acknowledged event stored once in `db`.
   */
  const underLoad = async (
    step: string,
    prefix: string,
    db: ReturnType<typeof postgres>,
    change: () => Promise<unknown>,
  ) => {
    const load = startLoad(gateway, KEYS, prefix);
    await sleep(1000);
    await timed(`${step} under load`, change);
    await waitUntil("the rollout to settle", allReady);
    await sleep(1000);
    const result = await load.stop();
    report(step, result);
    expectNothingLost(result);
    expectRetriesBounded(result, 2);
    await expectStoredOnce(db, result, prefix);
  };

  beforeAll(async () => {
    await timed("image (deno task image)", buildImage);
    previous = await timed("previous release's tree and image", preparePreviousRelease);
    node = await timed("node up (deploy/node/up.sh)", () => startNode("/tmp/crm-node-test"));
    console.log(node.timings);
    release = new NodeRelease(node, NAMESPACE, RELEASE);
    await timed(`${previous.image} into the node`, () => node.loadImage(previous!.image));
    receiver = startReceiver(WEBHOOK_SECRET, { hostname: NODE_IP, port: WEBHOOK_PORT });
    sql = postgres(node.databaseUrl, { max: 2, onnotice: () => {} });
  }, 900_000);

  afterAll(async () => {
    await sql?.end();
    await receiver?.close();
    await previous?.remove();
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
      expect(pods.map(componentOf).sort()).toEqual(
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
      expect(adminToken).toMatch(/^[A-Za-z0-9]{40}$/);
      // The start-up line names the address the service really listens on.
      for (const pod of pods) {
        const component = componentOf(pod);
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
    gateway = (await release.services())[`${RELEASE}-gateway`];
    expect(gateway).toMatch(/^http:\/\/198\.19\.0\.\d+:8080$/);
    // The admin command line from this machine, through the services' own Services.
    const imported = await timed(
      "admin import",
      () => release.admin(["import", MANIFEST], adminToken),
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

  it(
    "keeps the database URL and the admin token out of the gateway, which cannot reach Postgres; ingest can",
    async () => {
      const code = secretsProbe({ hostname: NODE_IP, port: 25432 });
      const seen = await timed("secrets and Postgres from the gateway and ingest", async () => {
        const [gatewayPod] = await servicePods("gateway");
        const [ingestPod] = await servicePods("ingest");
        return {
          gateway: await release.evalIn(gatewayPod.metadata.name, code),
          ingest: await release.evalIn(ingestPod.metadata.name, code),
        };
      });
      console.log(
        `realnode: gateway's files ${Object.keys(seen.gateway.files).join(", ")}; ` +
          `Postgres from the gateway: ${seen.gateway.postgres}, from ingest: ${seen.ingest.postgres}`,
      );
      const gatewayText = JSON.stringify(seen.gateway);
      expect(Object.keys(seen.gateway.env).filter((k) => /DATABASE|ADMIN_TOKEN/.test(k))).toEqual(
        [],
      );
      expect(gatewayText).not.toContain("postgres://");
      expect(gatewayText).not.toContain("25432");
      expect(gatewayText).not.toContain(adminToken);
      // What it does hold: its own secret setting, as a file.
      expect(seen.gateway.env.REDIS_URL_FILE).toBe("/var/run/secrets/crm/redis-url");
      expect(seen.gateway.files["/var/run/secrets/crm/redis-url"]).toBe(`redis://${NODE_IP}:26379`);
      expect(seen.gateway.postgres).not.toBe("open");
      // The same probe from ingest, which reads the database: the policy lets it through.
      expect(seen.ingest.files["/var/run/secrets/crm/database-url"]).toContain("postgres://");
      expect(seen.ingest.postgres).toBe("open");
    },
    120_000,
  );

  it("keeps the gateways Ready and cached reads answering with ingest scaled to 0", async () => {
    await timed("ingest scaled to 0", async () => {
      await kubectl(["scale", "deployment", `${RELEASE}-ingest`, "-n", NAMESPACE, "--replicas=0"]);
      await waitUntil(
        "no ingest pod",
        async () => (await servicePods("ingest")).length === 0,
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
    const gateways = await servicePods("gateway");
    expect(gateways).toHaveLength(2);
    for (const pod of gateways) expect(ready(pod), pod.metadata.name).toBe(true);
    console.log(`realnode: ${reads} reads answered 200 with ingest at 0, health ${health.status}`);
    await timed("ingest scaled back to 1", async () => {
      await kubectl(["scale", "deployment", `${RELEASE}-ingest`, "-n", NAMESPACE, "--replicas=1"]);
      await waitUntil("ingest ready again", allReady);
    });
  }, 180_000);

  it("upgrades under load: no read fails, every acknowledged event stored once", async () => {
    await underLoad(
      "upgrade",
      `upgrade-${crypto.randomUUID().slice(0, 8)}`,
      sql,
      () => upgradeToThisChart(["global.logLevel=debug"]),
    );
    const env = (await deployments())[0].spec.template.spec.containers[0].env;
    expect(env.find((e: Obj) => e.name === "LOG_LEVEL").value).toBe("debug");
    // The generated admin token survives the upgrade.
    expect(await secretToken()).toBe(adminToken);
  }, 400_000);

  it(
    "loses a pod of each service under load: no read fails, events 503 only while ingest has no ready pod",
    async () => {
      const prefix = `delete-${crypto.randomUUID().slice(0, 8)}`;
      const load = startLoad(gateway, KEYS, prefix);
      await sleep(1000);
      for (const component of COMPONENTS) {
        await timed(`${component} pod deleted and replaced under load`, async () => {
          const [victim] = await servicePods(component);
          await kubectl(["delete", "pod", "-n", NAMESPACE, victim.metadata.name, "--wait=false"]);
          await waitUntil(`${component} replaced`, async () =>
            (await allReady()) &&
            (await servicePods()).every((p) => p.metadata.name !== victim.metadata.name));
        });
      }
      await sleep(1000);
      const result = await load.stop();
      report("pod deletions", result);
      expectNothingLost(result);
      // One ingest pod: from its deletion until its replacement is ready, events answer 503.
      expect(result.unavailableWindowMs).toBeLessThan(60_000);
      expectRetriesBounded(result, 1);
      await expectStoredOnce(sql, result, prefix);
    },
    400_000,
  );

  it(
    "restarts a backend whose process is stopped (SIGSTOP): its liveness probe fails, reads go on",
    async () => {
      const stopAndWait = (components: string[]) => release.stopUntilRestarted(components);
      // Ingest alone: reads need only content and auth, and every one is answered.
      const prefix = `liveness-${crypto.randomUUID().slice(0, 8)}`;
      const load = startLoad(gateway, KEYS, prefix, { readers: 3, senders: 0 });
      await timed("ingest stopped, restarted by the kubelet", () => stopAndWait(["ingest"]));
      const result = await load.stop();
      report("ingest stopped (SIGSTOP)", result);
      expect(result.reads).toBeGreaterThan(50);
      expect(result.readFailures).toEqual([]);
      // Content and auth together: what the gateways' caches hold is served, a read that needs
      // a stopped service answers 503 service_unavailable or, the call hanging, 504 (operations.md,
      // "Faults"), nothing else.
      const both = startLoad(gateway, KEYS, prefix, { readers: 3, senders: 0 });
      await timed(
        "content and auth stopped, restarted by the kubelet",
        () => stopAndWait(["content", "auth"]),
      );
      const bothResult = await both.stop();
      report("content and auth stopped (SIGSTOP)", bothResult);
      expect(
        bothResult.readFailures.filter((f) =>
          !/^(503 \{"message":"service_unavailable"\}|504 \{"message":"upstream_timeout"\})$/.test(
            f,
          )
        ),
      ).toEqual([]);
      await waitUntil("every Deployment ready", allReady);
    },
    600_000,
  );

  it(
    "rotates the admin token over upgrades while admin calls go on: none fails, only the services roll",
    async () => {
      const old = adminToken;
      const next = Array.from(crypto.getRandomValues(new Uint8Array(30)), (b) => b.toString(36))
        .join("").slice(0, 40);
      // Admin calls through the services' Services, one after the other, with the callers' token.
      let caller = old;
      let running = true;
      const calls = { ok: 0, failed: [] as string[] };
      const loop = (async () => {
        while (running) {
          const token = caller;
          const out = await release.admin(["migrate", "status"], token);
          if (out.code === 0) calls.ok++;
          else calls.failed.push(`${token === old ? "old" : "new"} token: ${out.stderr.trim()}`);
        }
      })();
      const upgrade = async (step: string, sets: string[]) => {
        const before = await podsByComponent();
        await timed(`admin token rotation: ${step}`, () =>
          helm([
            "upgrade",
            RELEASE,
            "helm/crm",
            "--reuse-values",
            ...sets.flatMap((s) => ["--set", s]),
            "--wait=watcher",
            "--timeout",
            "5m",
          ]));
        await settled(before, ["auth", "content", "ingest"]);
      };
      try {
        await upgrade("the new token as ADMIN_TOKEN_NEXT", [
          `global.adminToken.next.value=${next}`,
        ]);
        caller = next;
        await upgrade("the tokens swapped", [
          `global.adminToken.value=${next}`,
          `global.adminToken.next.value=${old}`,
        ]);
        await upgrade("ADMIN_TOKEN_NEXT dropped", ["global.adminToken.next.value="]);
      } finally {
        running = false;
        await loop;
      }
      console.log(
        `realnode: admin token rotation: ${calls.ok} admin calls answered, ${calls.failed.length} failed`,
      );
      expect(calls.failed).toEqual([]);
      expect(calls.ok).toBeGreaterThan(5);
      adminToken = next;
      // The Secret holds the new token alone: the old one, once ADMIN_TOKEN_NEXT, is gone.
      const settings = await release.secretSettings();
      expect(settings["admin-token"]).toBe(next);
      expect(Object.keys(settings)).not.toContain("admin-token-next");
      // No pod reads a second token any more.
      for (const d of await deployments()) {
        const env = d.spec.template.spec.containers[0].env.map((e: Obj) => e.name);
        expect(env, d.metadata.name).not.toContain("ADMIN_TOKEN_NEXT_FILE");
      }
      const refused = await release.admin(["migrate", "status"], old);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/unauthenticated|admin token/i);
    },
    600_000,
  );

  it(
    "renders the same objects twice with GitOps settings (helm template, no cluster)",
    async () => {
      const render = async (args: string[]) => {
        const out = await node.helm(["template", RELEASE, "helm/crm", "-n", NAMESPACE, ...args]);
        expect(out.code, out.stderr).toBe(0);
        return out.stdout;
      };
      // docs/kubernetes.md, "GitOps": secrets in existing Secrets (helm/crm/ci/production.yaml),
      // or the admin token given as a value.
      for (
        const args of [
          ["-f", "helm/crm/ci/production.yaml"],
          ["-f", VALUES, "--set", "global.adminToken.value=gitops-token-0123456789abcdef"],
        ]
      ) {
        const first = await render(args);
        expect(first).toContain("checksum/secrets");
        expect(await render(args), args.join(" ")).toBe(first);
      }
      // Without either, the token that only helm install can generate is left out, not made anew.
      const bare = await render(["-f", VALUES]);
      expect(bare).not.toContain("admin-token:");
      expect(await render(["-f", VALUES])).toBe(bare);
    },
    120_000,
  );

  it(
    "restores a dump taken under load by docs/upgrades.md's procedure: nothing acknowledged is lost, " +
      "a key revoked since is refused again, no webhook is sent twice, the caches are dropped",
    async () => {
      const dir = await Deno.makeTempDir({ prefix: "crm-restore-" });
      // A webhook to the receiver, and a second site key to revoke once the dump is taken.
      const manifest = JSON.parse(await Deno.readTextFile(MANIFEST));
      manifest.webhooks = [{
        url: `${receiver!.url}/hook`,
        events: ["lead.created"],
        secret: WEBHOOK_SECRET,
      }];
      await Deno.writeTextFile(`${dir}/site.json`, JSON.stringify(manifest));
      const imported = await release.admin(["import", `${dir}/site.json`], adminToken);
      expect(imported.code, imported.stderr).toBe(0);
      const created = await release.admin(["key", "create", "demo", "--kind", "site"], adminToken);
      expect(created.code, created.stderr).toBe(0);
      const extra = JSON.parse(created.stdout) as { key: string; keyHash: string };
      const read = (key: string) =>
        fetch(`${gateway}/content/v1/pages/home`, { headers: { "x-crm-key": key } })
          .then(async (answer) => (await answer.body?.cancel(), answer.status));
      expect(await read(extra.key)).toBe(200);

      const prefix = `restore-${crypto.randomUUID().slice(0, 8)}`;
      const load = startLoad(gateway, KEYS, prefix);
      await sleep(1000);
      // A lead whose first delivery fails: pending when the dump begins, delivered after it.
      receiver!.failNext(1, 503);
      const lead = await fetch(`${gateway}/marketing/lead`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-event-key": KEYS.secret },
        body: JSON.stringify({ email: `${prefix}@example.com` }),
      });
      expect(lead.status, await lead.clone().text()).toBe(200);
      const leadId = (await lead.json()).id as string;
      const [first] = await receiver!.waitFor((d) => d.type === "lead.created", 1, 30_000);
      expect(first.status).toBe(503);
      const ackedBefore = [...load.acked];
      const dumpFile = `${dir}/crm.dump`;
      await timed(
        "restore drill: pg_dump under load",
        () => restore.dump(node.databaseUrl, dumpFile),
      );
      // After the dump: the key revoked, the delivery made.
      const revoked = await release.admin(["key", "revoke", extra.key], adminToken);
      expect(revoked.code, revoked.stderr).toBe(0);
      await receiver!.waitFor((d) => d.id === first.id && d.status < 300, 1, 60_000).catch(
        async (error) => {
          const [ingestPod] = await servicePods("ingest");
          const logs = await kubectl(["logs", "-n", NAMESPACE, ingestPod.metadata.name]);
          const rows = await sql`SELECT * FROM ingest.webhook_deliveries`;
          throw new Error(
            `${error.message}\ndeliveries: ${JSON.stringify(rows)}\ningest's log:\n` +
              logs.split("\n").filter((l) => /webhook|error/i.test(l)).slice(-20).join("\n"),
          );
        },
      );
      await sleep(1000);
      const result = await load.stop();
      report("restore drill: load while the dump was taken", result);
      expectNothingLost(result, { reads: 10, acked: 5 });

      const drill: restore.Drill = {
        release,
        token: adminToken,
        site: "demo",
        dir,
        backupStart: await restore.backupStart(dumpFile),
      };
      const procedureStarted = performance.now();
      await timed(
        "restore drill: 1. what the old installation did since",
        () => restore.keepWhatTheOldDid(drill),
      );
      const newUrl = await timed(
        "restore drill: 2. pg_restore into a fresh database",
        () => restore.restoreInto(drill, dumpFile, node.databaseUrl, "crm_restored"),
      );
      const marked = await timed(
        "restore drill: 3. webhooks already sent",
        () => restore.markWebhooksSent(drill, newUrl),
      );
      // None in content's outbox, the lead's delivery in ingest's.
      expect(marked).toMatch(/UPDATE 0\nUPDATE 1\n/);
      const before = await podsByComponent();
      await timed(
        "restore drill: 4. helm upgrade to the restored database",
        () => restore.switchTo(drill, newUrl),
      );
      await settled(before, ["auth", "content", "ingest"]);
      const again = await timed(
        "restore drill: 5. keys revoked since, revoked again",
        () => restore.revokeAgain(drill),
      );
      expect(again).toEqual([extra.keyHash]);
      expect(await read(extra.key)).toBe(401);
      const redisKeys = await timed("restore drill: 6. caches dropped", async () => {
        await restore.dropCaches(drill, node.redisUrl);
        return await restore.redisKeys(node.redisUrl, "crm:");
      });
      expect(redisKeys).toEqual([]);
      // The gateways restarted: every one new (the replaced ones finish their requests first).
      await waitUntil(
        "the restarted gateways only",
        async () =>
          (await podsByComponent()).gateway.names.every((n) => !before.gateway.names.includes(n)),
      );
      const history = await timed(
        "restore drill: 7. history import",
        () => restore.importHistory(drill),
      );
      const procedureMs = Math.round(performance.now() - procedureStarted);
      await waitUntil("every Deployment ready", allReady);

      const restored = postgres(newUrl, { max: 1, onnotice: () => {} });
      try {
        const stored = await storedEvents(restored, prefix);
        expect(ackedBefore.filter((id) => !stored.has(id))).toEqual([]);
        // With the history of step 7, every acknowledged event, each once.
        await expectStoredOnce(restored, result, prefix);
        const leads =
          await restored`SELECT count(*)::int AS n FROM ingest.leads WHERE id = ${leadId}`;
        expect(leads[0].n).toBe(1);
        const deliveries = await restored`
          SELECT state FROM ingest.webhook_deliveries WHERE message_id = ${first.id}`;
        expect(deliveries.map((d) => d.state)).toEqual(["delivered"]);
        // The restored services had time to send what they hold pending: nothing of the lead again.
        await sleep(8000);
        expect(receiver!.deliveries.filter((d) => d.id === first.id).map((d) => d.status))
          .toEqual([503, 204]);
        console.log(
          `realnode: restore drill: ${ackedBefore.length} events acknowledged before the dump ` +
            `began, all restored; ${
              result.acked.length - ackedBefore.length
            } acknowledged after, ` +
            `brought back by history import (${JSON.stringify(history)}); procedure ` +
            `${procedureMs} ms; key ${extra.keyHash.slice(0, 16)}... refused again`,
        );
      } finally {
        await restored.end();
        await Deno.remove(dir, { recursive: true });
      }
    },
    600_000,
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

  it(
    "upgrades from the previous release (its image and chart) to this one and rolls back, " +
      "each under load: no read fails, every acknowledged event stored once",
    async () => {
      const prev = previous!;
      // A database of its own, made by the previous release's migrations.
      await sql.unsafe("CREATE DATABASE crm_prev");
      const prevUrl = `postgres://postgres@${NODE_IP}:25432/crm_prev`;
      const prevSql = postgres(prevUrl, { max: 2, onnotice: () => {} });
      const imageOf = async () => [
        ...new Set((await deployments()).map((d) => d.spec.template.spec.containers[0].image)),
      ];
      try {
        await timed(`helm install ${prev.tag} (its chart, its values)`, () =>
          helm([
            "install",
            RELEASE,
            `${prev.dir}/helm/crm`,
            "--create-namespace",
            "--wait=watcher",
            "--timeout",
            "5m",
            "-f",
            `${prev.dir}/test/fixtures/realnode/values.yaml`,
            "--set",
            `global.image.tag=${prev.tag}`,
            "--set",
            `global.postgres.url=${prevUrl}`,
          ]));
        expect(await imageOf()).toEqual([prev.image]);
        const token = await secretToken();
        // Its own admin command line, from its tree.
        const imported = await timed(
          `${prev.tag} admin import`,
          () => release.admin(["import", MANIFEST], token, prev.dir),
        );
        expect(imported.code, imported.stderr).toBe(0);
        gateway = (await release.services())[`${RELEASE}-gateway`];
        await underLoad(
          `upgrade from ${prev.tag}`,
          `from-${prev.tag}-${crypto.randomUUID().slice(0, 8)}`,
          prevSql,
          () => upgradeToThisChart([`global.postgres.url=${prevUrl}`]),
        );
        expect(await imageOf()).toEqual(["localhost/crm:dev"]);
        expect(await secretToken()).toBe(token);
        await underLoad(
          `rollback to ${prev.tag}`,
          `back-to-${prev.tag}-${crypto.randomUUID().slice(0, 8)}`,
          prevSql,
          () => helm(["rollback", RELEASE, "1", "--wait=watcher", "--timeout", "5m"]),
        );
        expect(await imageOf()).toEqual([prev.image]);
      } finally {
        await prevSql.end();
      }
    },
    900_000,
  );
});
