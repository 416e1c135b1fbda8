/**
 * The chart's wiring, run for real: the umbrella chart is rendered, and each
 * Deployment's arguments and environment (the secret files its projected
 * volume mounts written from the rendered Secrets, Service addresses resolved
 * to loopback ports) start the services as local processes, after the
 * migration Job's command. A smoke test then passes through the gateway. A
 * wrong port, a missing setting, a file no volume mounts or a Secret key
 * nobody renders makes it fail.
 */
import { afterAll, describe, expect, it } from "vitest";
import { freshPostgresUrl } from "./helpers/storage.ts";
import { parseAllDocuments } from "yaml";
import { DATABASE_URL, REDIS_URL, uniqueId } from "./helpers/env.ts";
import { freePort } from "./helpers/ports.ts";
import { tool } from "./helpers/tools.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
const HELM = tool("helm");

// deno-lint-ignore no-explicit-any
type Obj = any;

interface Wired {
  args: string[];
  env: Record<string, string>;
}

describe.runIf(DATABASE_URL && REDIS_URL && HELM)("the chart's wiring", () => {
  const suffix = uniqueId("");
  const processes: Deno.ChildProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  let dropDatabase: (() => Promise<void>) | undefined;

  afterAll(async () => {
    for (const child of processes) {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
    }
    await dropDatabase?.();
    for (const cleanup of cleanups) await cleanup();
  });

  it("starts the services exactly as the Deployments configure them", async () => {
    const fresh = await freshPostgresUrl();
    dropDatabase = fresh.drop;
    const databaseUrl = fresh.url;

    const rendered = await new Deno.Command(HELM!, {
      args: [
        "template",
        "r1",
        "helm/crm",
        "--set",
        `global.postgres.url=${databaseUrl}`,
        "--set",
        `global.redis.url=${REDIS_URL}`,
        "--set",
        `global.redis.keyPrefix=crmwiring${suffix}:`,
        "--set",
        "global.adminToken.value=wiring-admin-token",
      ],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    expect(rendered.code, new TextDecoder().decode(rendered.stderr)).toBe(0);
    const all: Obj[] = parseAllDocuments(new TextDecoder().decode(rendered.stdout))
      .map((d: { toJS(): Obj }) => d.toJS()).filter(Boolean);
    const of = (kind: string) => all.filter((o) => o.kind === kind);

    // Every Service gets a loopback port; its Deployment listens there.
    const services = new Map<string, { port: number; targetPort: string; local: number }>();
    for (const service of of("Service")) {
      const [port] = service.spec.ports;
      services.set(service.metadata.name, {
        port: port.port,
        targetPort: port.targetPort,
        local: freePort(),
      });
    }
    const secrets = new Map(
      of("Secret").map((s) => [
        s.metadata.name,
        Object.fromEntries(
          Object.entries(s.data as Record<string, string>).map(([k, v]) => [k, atob(v)]),
        ),
      ]),
    );
    const files = await Deno.makeTempDir({ prefix: "crm-wiring-" });
    cleanups.push(() => Deno.remove(files, { recursive: true }));
    /**
     * The file a container reads at `path`: found through its volume mounts
     * and the pod's projected volumes, written from the rendered Secret.
     */
    const secretFile = async (pod: Obj, container: Obj, path: string): Promise<string> => {
      const mount = container.volumeMounts.find((m: Obj) => path.startsWith(`${m.mountPath}/`));
      expect(mount, `${path}: mounted`).toBeDefined();
      const volume = pod.volumes.find((v: Obj) => v.name === mount.name);
      const file = path.slice(mount.mountPath.length + 1);
      const source = volume.projected.sources.find((s: Obj) =>
        s.secret.items.some((i: Obj) => i.path === file)
      );
      expect(source, `${path}: projected from a Secret`).toBeDefined();
      const { key } = source.secret.items.find((i: Obj) => i.path === file);
      const secret = secrets.get(source.secret.name);
      expect(secret?.[key], `${path}: Secret ${source.secret.name} key ${key}`).toBeDefined();
      const local = `${files}/${container.name}-${file}`;
      await Deno.writeTextFile(local, secret![key]);
      return local;
    };
    const resolve = async (pod: Obj, container: Obj, listenOn?: number): Promise<Wired> => {
      const env: Record<string, string> = {};
      for (const entry of container.env) {
        expect(entry.valueFrom?.secretKeyRef, `${entry.name}: secrets come as files`)
          .toBeUndefined();
        if (entry.valueFrom) continue; // the downward API, with telemetry only
        let value = String(entry.value);
        if (entry.name.endsWith("_FILE")) value = await secretFile(pod, container, value);
        // http://r1-auth:50051 → the loopback port of Service r1-auth, when the port is its port.
        value = value.replace(/^http:\/\/([a-z0-9-]+):(\d+)$/, (whole, host, port) => {
          const service = services.get(host);
          return service && service.port === Number(port)
            ? `http://127.0.0.1:${service.local}`
            : whole;
        });
        env[entry.name] = value;
      }
      if (listenOn !== undefined) {
        // The container listens where the Service sends traffic: its named port's number.
        const named = container.ports.find((p: Obj) =>
          p.name === services.get(container.serviceName)?.targetPort
        );
        expect(
          named,
          `${container.serviceName}: the Service's targetPort is a port of the container`,
        )
          .toBeDefined();
        const setting = env.PORT !== undefined ? "PORT" : "GRPC_PORT";
        expect(Number(env[setting]), `${container.serviceName}: ${setting}`).toBe(
          named.containerPort,
        );
        env[setting] = String(listenOn);
        env.HOST = "127.0.0.1";
      }
      return { args: container.args, env: { ...env, LOG_LEVEL: "error" } };
    };

    const runOnce = async ({ args, env }: Wired) => {
      const output = await new Deno.Command("deno", {
        args: ["run", "-A", "services/cli/container.ts", ...args],
        cwd: ROOT,
        env,
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const decoder = new TextDecoder();
      expect(output.code, `${args.join(" ")}: ${decoder.decode(output.stderr)}`).toBe(0);
      return decoder.decode(output.stdout);
    };

    const jobPod = of("Job")[0].spec.template.spec;
    const job = await resolve(jobPod, jobPod.containers[0]);
    expect(job.args).toEqual(["admin", "migrate", "--database"]);
    await runOnce({ ...job, env: { ...job.env, PATH: Deno.env.get("PATH")! } });

    for (const component of ["auth", "content", "ingest", "gateway"]) {
      const deployment = of("Deployment").find((d) => d.metadata.name === `r1-${component}`);
      const container = {
        ...deployment.spec.template.spec.containers[0],
        serviceName: `r1-${component}`,
      };
      const wired = await resolve(
        deployment.spec.template.spec,
        container,
        services.get(`r1-${component}`)!.local,
      );
      expect(wired.args).toEqual(["service", component]);
      const child = new Deno.Command("deno", {
        args: ["run", "-A", "services/cli/container.ts", ...wired.args],
        cwd: ROOT,
        env: { ...wired.env, PATH: Deno.env.get("PATH")! },
        clearEnv: true,
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      processes.push(child);
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let out = "";
      while (!out.includes(`${component} listening on`)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`${component} exited: ${out}`);
        out += value;
      }
      (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })().catch(() => {});
    }

    // The admin command with the CronJob's settings imports the site through the services.
    const cronPod = of("CronJob")[0].spec.jobTemplate.spec.template.spec;
    const cli = await resolve(cronPod, cronPod.containers[0]);
    await runOnce({
      args: ["admin", "import", "test/fixtures/contract-example.json"],
      env: { ...cli.env, PATH: Deno.env.get("PATH")! },
    });

    const gateway = `http://127.0.0.1:${services.get("r1-gateway")!.local}`;
    const health = await fetch(`${gateway}/healthz`);
    expect(await health.json()).toEqual({
      status: "ok",
      services: { auth: "SERVING", content: "SERVING", ingest: "SERVING" },
    });
    const page = await fetch(`${gateway}/content/v1/pages/home`, {
      headers: { "x-crm-key": SITE_KEY },
    });
    expect(page.status).toBe(200);
    expect((await page.json()).marker).toBe("home");
    const event = await fetch(`${gateway}/marketing/event`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-event-key": SECRET_KEY },
      body: JSON.stringify({ name: "signup", event_id: uniqueId("wiring-") }),
    });
    expect(await event.json()).toEqual({ ok: true, duplicate: false });
  }, 180_000);
});
