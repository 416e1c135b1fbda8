/**
 * auth-, content- and ingest-service away, with Toxiproxy between the
 * gateway and each (the services as separate processes on Postgres and
 * Redis). As docs/operations.md ("Faults") promises: content already read
 * keeps being served from the gateway's caches; what needs a service that is
 * away gets a JSON 503 `service_unavailable` with Retry-After, never a 200
 * for an event that was not stored; everything recovers without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL, REDIS_URL, uniqueId } from "../helpers/env.ts";
import { runTask } from "../helpers/process.ts";
import { TOXIPROXY } from "../helpers/toxiproxy.ts";
import {
  type FaultCluster,
  sendEvent as send,
  SITE_KEY,
  startFaultCluster,
} from "../helpers/fault_cluster.ts";

describe.runIf(DATABASE_URL && REDIS_URL && TOXIPROXY)("services away", () => {
  let cluster: FaultCluster;

  beforeAll(async () => {
    cluster = await startFaultCluster({ serviceProxies: true });
  }, 120_000);

  afterAll(async () => {
    await cluster?.close();
  });

  const read = (path: string) =>
    fetch(`${cluster.url}${path}`, { headers: { "x-crm-key": SITE_KEY } });
  const sendEvent = (eventId: string) => send(cluster.url, eventId);

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

      await cluster.proxies.content!.disable();
      await cluster.proxies.auth!.disable();
      for (let i = 0; i < 5; i++) {
        const again = await read("/content/v1/pages/home?lang=en");
        expect(again.status).toBe(200);
        expect(await again.text()).toBe(body);
      }
      // Not read before: it needs content-service.
      await expectUnavailable(await read("/content/v1/pages/home?lang=de"));

      await cluster.proxies.content!.enable();
      await cluster.proxies.auth!.enable();
      await expect.poll(async () => (await read("/content/v1/pages/home?lang=de")).status, {
        timeout: 15_000,
        interval: 250,
      }).toBe(200);
      console.log(
        "[fault auth+content away] hot read 200 from the caches 5/5, cold read 503 " +
          "service_unavailable with Retry-After 1/1, recovered to 200 without a restart",
      );
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
      await cluster.proxies.ingest!.disable();
      for (let i = 0; i < 5; i++) await send(uniqueId("away-"));
      await cluster.proxies.ingest!.enable();
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
      const exported = await runTask(["admin", "events", "export", "demo"], cluster.cli);
      expect(exported.code, exported.stderr).toBe(0);
      const stored = exported.stdout.split("\n").filter(Boolean).map((line) =>
        JSON.parse(line).eventId
      );
      const once = acknowledged.filter((eventId) =>
        stored.filter((id) => id === eventId).length === 1
      );
      console.log(
        `[fault ingest away] events 200 before ${
          5 - refused.filter((id) => id.startsWith("before-")).length
        }/5, ` +
          `503 while away ${refused.length}/5, retried to 200 ${refused.length}; ` +
          `acknowledged ${acknowledged.length}, stored exactly once ${once.length}`,
      );
      for (const eventId of acknowledged) {
        expect(stored.filter((id) => id === eventId), eventId).toHaveLength(1);
      }
    },
    60_000,
  );
});
