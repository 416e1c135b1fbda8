/**
 * The chart's wiring, run for real: the umbrella chart is rendered, and each
 * Deployment's arguments and environment (Secret references resolved from
 * the rendered Secrets, Service addresses resolved to loopback ports) start
 * the services as local processes, after the migration Job's command. A
 * smoke test then passes through the gateway. A wrong port, a missing
 * setting or a Secret key nobody renders makes it fail.
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
  let dropDatabase: (() => Promise<void>) | undefined;

  afterAll(async () => {
    for (const child of processes) {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
    }
    await dropDatabase?.();
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
    const secrets = new Map(of("Secret").map((s) => [s.metadata.name, s.stringData]));
    const resolve = (container: Obj, listenOn?: number): Wired => {
      const env: Record<string, string> = {};
      for (const entry of container.env) {
        let value: string;
        if (entry.valueFrom) {
          const { name, key } = entry.valueFrom.secretKeyRef;
          const secret = secrets.get(name);
          expect(secret?.[key], `${entry.name}: Secret ${name} key ${key}`).toBeDefined();
          value = secret[key];
        } else value = String(entry.value);
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

    const job = of("Job")[0].spec.template.spec.containers[0];
    expect(job.args).toEqual(["admin", "migrate", "--database"]);
    await runOnce({ ...resolve(job), env: { ...resolve(job).env, PATH: Deno.env.get("PATH")! } });

    for (const component of ["auth", "content", "ingest", "gateway"]) {
      const deployment = of("Deployment").find((d) => d.metadata.name === `r1-${component}`);
      const container = {
        ...deployment.spec.template.spec.containers[0],
        serviceName: `r1-${component}`,
      };
      const wired = resolve(container, services.get(`r1-${component}`)!.local);
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
    const cron = of("CronJob")[0].spec.jobTemplate.spec.template.spec.containers[0];
    const cli = resolve(cron);
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
