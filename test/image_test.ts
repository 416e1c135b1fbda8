/**
 * The image as a cluster runs it: `deno task image` builds it with podman,
 * the four services run as containers (read-only root file system, a
 * non-root user, host network, the host's Postgres and Redis), and a smoke
 * test passes through the gateway: /healthz, a content read, a server event,
 * then an admin command from the same image. SIGTERM stops each cleanly.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresUrl } from "./helpers/storage.ts";
import { DATABASE_URL, REDIS_URL, uniqueId } from "./helpers/env.ts";
import { freePort } from "./helpers/ports.ts";
import { buildImage, IMAGE, PODMAN, podman } from "./helpers/podman.ts";

const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
const MANIFEST = new URL("./fixtures/contract-example.json", import.meta.url).pathname;

describe.runIf(DATABASE_URL && REDIS_URL && PODMAN)("the image", () => {
  const suffix = uniqueId("");
  const containers: string[] = [];
  let built = "";
  let env: string[] = [];
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    built = await buildImage();
    const fresh = await freshPostgresUrl();
    dropDatabase = fresh.drop;
    const ports = { auth: freePort(), content: freePort(), ingest: freePort() };
    env = [
      `DATABASE_URL=${fresh.url}`,
      `REDIS_URL=${REDIS_URL}`,
      `REDIS_KEY_PREFIX=crmimage${suffix}:`,
      `AUTH_URL=http://127.0.0.1:${ports.auth}`,
      `CONTENT_URL=http://127.0.0.1:${ports.content}`,
      `INGEST_URL=http://127.0.0.1:${ports.ingest}`,
    ].flatMap((setting) => ["-e", setting]);
  }, 600_000);

  afterAll(async () => {
    if (containers.length) await podman(["rm", "-f", "-t", "2", ...containers]);
    await dropDatabase?.();
  });

  /** The hardened way a cluster runs the image. */
  const hardened = ["--read-only", "--user", "10001:10001", "--network", "host"];

  async function run(service: string, port: number, portSetting: string): Promise<string> {
    const name = `crm-${service}-${suffix}`;
    const started = await podman([
      "run",
      "-d",
      "--name",
      name,
      ...hardened,
      ...env,
      "-e",
      "HOST=127.0.0.1",
      "-e",
      `${portSetting}=${port}`,
      IMAGE,
      "service",
      service,
    ]);
    expect(started.code, started.stderr).toBe(0);
    containers.push(name);
    return name;
  }

  async function adminCommand(args: string[], extra: string[] = []): Promise<string> {
    const output = await podman([
      "run",
      "--rm",
      ...hardened,
      ...env,
      ...extra,
      IMAGE,
      "admin",
      ...args,
    ]);
    expect(output.code, output.stderr).toBe(0);
    return output.stdout;
  }

  /**
   * The gateway is ready (200) once auth has answered, and says "degraded" until
   * every service has; the smoke test needs all three.
   */
  async function waitForHealth(url: string): Promise<unknown> {
    const deadline = Date.now() + 60_000;
    let last = "";
    while (Date.now() < deadline) {
      try {
        const answer = await fetch(`${url}/healthz`);
        const body = await answer.json();
        if (answer.status === 200 && body.status === "ok") return body;
        last = JSON.stringify(body);
      } catch (error) {
        last = String(error);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`gateway not healthy: ${last}`);
  }

  it("is built small, non-root and labelled, without tests or build tools", async () => {
    expect(built).toMatch(/built localhost\/crm:dev from \S+ \(\d+ MB\)/);
    const inspect = JSON.parse((await podman(["image", "inspect", IMAGE])).stdout)[0];
    expect(inspect.Config.User).toBe("10001:10001");
    expect(inspect.Config.Labels["org.opencontainers.image.title"]).toBe("crm");
    expect(inspect.Config.Labels["org.opencontainers.image.revision"]).toMatch(/^[0-9a-f]{7,}$/);
    expect(inspect.Size).toBeLessThan(300_000_000);
    const listing = await podman([
      "run",
      "--rm",
      "--entrypoint",
      "deno",
      IMAGE,
      "eval",
      `const names = []; for await (const e of Deno.readDir("/app")) names.push(e.name);
       for await (const e of Deno.readDir("/app/node_modules/.deno")) names.push(e.name);
       console.log(names.join("\\n"))`,
    ]);
    expect(listing.code, listing.stderr).toBe(0);
    const names = listing.stdout.split("\n");
    expect(names).toContain("services");
    for (const absent of ["test", "docs", "helm", "proto", ".git"]) {
      expect(names).not.toContain(absent);
    }
    expect(names.some((n) => /^(vitest|playwright-core|@bufbuild\+buf)@/.test(n))).toBe(false);
  });

  it("runs the four services as hardened containers and passes a smoke test", async () => {
    const urlOf = (setting: string) => env.find((e) => e.startsWith(`${setting}=`))!.split("=")[1];
    // As the chart's pre-install Job does: migrations first, straight on the database.
    const migrated = JSON.parse(await adminCommand(["migrate", "--database"]));
    expect(Object.keys(migrated)).toEqual(["auth", "content", "ingest"]);
    expect(migrated.auth.applied.length).toBeGreaterThan(0);
    await run("auth", Number(new URL(urlOf("AUTH_URL")).port), "GRPC_PORT");
    await run("content", Number(new URL(urlOf("CONTENT_URL")).port), "GRPC_PORT");
    await run("ingest", Number(new URL(urlOf("INGEST_URL")).port), "GRPC_PORT");

    const gatewayPort = freePort();
    const gateway = await run("gateway", gatewayPort, "PORT");
    const url = `http://127.0.0.1:${gatewayPort}`;
    expect(await waitForHealth(url)).toEqual({
      status: "ok",
      services: { auth: "SERVING", content: "SERVING", ingest: "SERVING" },
    });
    // Through the services' admin RPCs now: nothing is left to apply.
    expect(JSON.parse(await adminCommand(["migrate"])).ingest.applied).toEqual([]);
    const imported = JSON.parse(
      await adminCommand(["import", "/tmp/site.json"], ["-v", `${MANIFEST}:/tmp/site.json:ro`]),
    );
    expect(imported.site).toBe("demo");
    const page = await fetch(`${url}/content/v1/pages/home`, {
      headers: { "x-crm-key": SITE_KEY },
    });
    expect(page.status).toBe(200);
    expect((await page.json()).marker).toBe("home");
    const eventId = uniqueId("image-");
    const event = await fetch(`${url}/marketing/event`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-event-key": SECRET_KEY },
      body: JSON.stringify({ name: "signup", event_id: eventId }),
    });
    expect(await event.json()).toEqual({ ok: true, duplicate: false });

    // The admin command from the same image reads back what was stored.
    const exported = await adminCommand(["events", "export", "demo"]);
    expect(exported.split("\n").filter(Boolean).map((line) => JSON.parse(line).eventId))
      .toContain(eventId);

    // SIGTERM drains and exits 0, well within a pod's termination grace.
    for (const name of [gateway, ...containers.filter((c) => c !== gateway)]) {
      const stopped = await podman(["stop", "-t", "20", name]);
      expect(stopped.code, stopped.stderr).toBe(0);
      const code = (await podman(["inspect", name, "--format", "{{.State.ExitCode}}"])).stdout;
      expect(code.trim(), name).toBe("0");
    }
  }, 180_000);
});
