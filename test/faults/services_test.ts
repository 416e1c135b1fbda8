/**
 * auth-, content- and ingest-service away, with Toxiproxy between the
 * gateway and each (the services as separate processes on Postgres and
 * Redis). As docs/operations.md ("Faults") promises: content already read
 * keeps being served from the gateway's caches; what needs a service that is
 * away gets a JSON 503 `service_unavailable` with Retry-After, never a 200
 * for an event that was not stored; everything recovers without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresUrl } from "../helpers/storage.ts";
import { DATABASE_URL, REDIS_URL, uniqueId } from "../helpers/env.ts";
import { type RunningProcess, runningServices, runTask, startService } from "../helpers/process.ts";
import { type Proxy, startToxiproxy, TOXIPROXY, type Toxiproxy } from "../helpers/toxiproxy.ts";

const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";

describe.runIf(DATABASE_URL && REDIS_URL && TOXIPROXY)("services away", () => {
  const suffix = uniqueId("");
  let toxiproxy: Toxiproxy;
  const proxies: Record<string, Proxy> = {};
  let gateway: RunningProcess;
  let cli: Record<string, string>;
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const fresh = await freshPostgresUrl();
    dropDatabase = fresh.drop;
    const env = {
      DATABASE_URL: fresh.url,
      REDIS_URL: REDIS_URL!,
      REDIS_KEY_PREFIX: `crmfaultsvc${suffix}:`,
    };
    const migrated = await runTask(["admin", "migrate", "--database"], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    toxiproxy = await startToxiproxy();
    const direct: Record<string, string> = {};
    for (const name of ["auth", "content", "ingest"] as const) {
      const service = await startService(name, { ...env, GRPC_PORT: "0" });
      direct[name] = service.url;
      proxies[name] = await toxiproxy.proxy(`${name}_${suffix}`, new URL(service.url).host);
    }
    cli = {
      ...env,
      AUTH_URL: direct.auth,
      CONTENT_URL: direct.content,
      INGEST_URL: direct.ingest,
    };
    const imported = await runTask(["admin", "import", "test/fixtures/contract-example.json"], cli);
    expect(imported.code, imported.stderr).toBe(0);
    gateway = await startService("gateway", {
      ...env,
      PORT: "0",
      AUTH_URL: `http://${proxies.auth.listen}`,
      CONTENT_URL: `http://${proxies.content.listen}`,
      INGEST_URL: `http://${proxies.ingest.listen}`,
    });
  }, 120_000);

  afterAll(async () => {
    for (const running of runningServices) await running.stop();
    await toxiproxy?.stop();
    await dropDatabase?.();
  });

  const read = (path: string) =>
    fetch(`${gateway.url}${path}`, { headers: { "x-crm-key": SITE_KEY } });
  const sendEvent = (eventId: string) =>
    fetch(`${gateway.url}/marketing/event`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-event-key": SECRET_KEY },
      body: JSON.stringify({ name: "signup", event_id: eventId }),
    });

  async function expectUnavailable(answer: Response) {
    expect(answer.status).toBe(503);
    expect(answer.headers.get("content-type")).toBe("application/json");
    expect(answer.headers.get("retry-after")).toBe("1");
    expect(await answer.json()).toEqual({ message: "service_unavailable" });
  }

  it(
    "serves hot reads from its caches and answers 503 for cold ones while auth and content are away",
    async () => {
      const hot = await read("/content/v1/pages/home?lang=en");
      expect(hot.status).toBe(200);
      const body = await hot.text();

      await proxies.content.disable();
      await proxies.auth.disable();
      for (let i = 0; i < 5; i++) {
        const again = await read("/content/v1/pages/home?lang=en");
        expect(again.status).toBe(200);
        expect(await again.text()).toBe(body);
      }
      // Not read before: it needs content-service.
      await expectUnavailable(await read("/content/v1/pages/home?lang=de"));

      await proxies.content.enable();
      await proxies.auth.enable();
      await expect.poll(async () => (await read("/content/v1/pages/home?lang=de")).status, {
        timeout: 15_000,
        interval: 250,
      }).toBe(200);
    },
    60_000,
  );

  it(
    "never acknowledges an event ingest did not store, and stores each acknowledged one once",
    async () => {
      const acknowledged: string[] = [];
      const refused: string[] = [];
      const send = async (eventId: string) => {
        const answer = await sendEvent(eventId);
        if (answer.status === 200) {
          expect(await answer.json()).toMatchObject({ ok: true });
          acknowledged.push(eventId);
        } else {
          await expectUnavailable(answer);
          refused.push(eventId);
        }
      };
      for (let i = 0; i < 5; i++) await send(uniqueId("before-"));
      await proxies.ingest.disable();
      for (let i = 0; i < 5; i++) await send(uniqueId("away-"));
      await proxies.ingest.enable();
      // A client retries what was refused, with the same event id.
      for (const eventId of [...refused]) {
        await expect.poll(async () => {
          const answer = await sendEvent(eventId);
          await answer.body?.cancel();
          return answer.status;
        }, { timeout: 15_000, interval: 250 }).toBe(200);
        acknowledged.push(eventId);
      }
      expect(refused.length).toBe(5);
      const exported = await runTask(["admin", "events", "export", "demo"], cli);
      expect(exported.code, exported.stderr).toBe(0);
      const stored = exported.stdout.split("\n").filter(Boolean).map((line) =>
        JSON.parse(line).eventId
      );
      for (const eventId of acknowledged) {
        expect(stored.filter((id) => id === eventId), eventId).toHaveLength(1);
      }
    },
    60_000,
  );
});
