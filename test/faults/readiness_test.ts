/**
 * Readiness that degrades instead of failing (docs/operations.md,
 * "Readiness"), with the four services as separate processes and a backend
 * stopped for real: the gateway's /healthz stays 200 (`degraded`, naming the
 * backend that is away) while it can still serve, cached content reads keep
 * answering 200, and what needs the missing backend answers 503 with
 * Retry-After. A gateway started while a backend is away is not ready until
 * that backend has answered SERVING once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL, REDIS_URL, uniqueId } from "../helpers/env.ts";
import { TOXIPROXY } from "../helpers/toxiproxy.ts";
import {
  answerKey,
  count,
  type FaultCluster,
  sendEvent,
  SITE_KEY,
  startFaultCluster,
  type Tally,
} from "../helpers/fault_cluster.ts";

interface Health {
  status: string;
  services: Record<string, string>;
}

const ROUNDS = 20;

describe.runIf(DATABASE_URL && REDIS_URL && TOXIPROXY)("readiness with a backend away", () => {
  let cluster: FaultCluster;

  beforeAll(async () => {
    cluster = await startFaultCluster();
  }, 120_000);

  afterAll(async () => {
    await cluster?.close();
  });

  const health = async (): Promise<{ code: number; body: Health }> => {
    const answer = await fetch(`${cluster.url}/healthz`);
    return { code: answer.status, body: await answer.json() };
  };
  const read = (lang: string) =>
    fetch(`${cluster.url}/content/v1/pages/home?lang=${lang}`, {
      headers: { "x-crm-key": SITE_KEY },
    });
  /** Waits until the gateway's background poll has seen `name` in `state`. */
  const seen = (name: string, state: (s: string) => boolean) =>
    expect.poll(async () => state((await health()).body.services[name]), {
      timeout: 15_000,
      interval: 200,
    }).toBe(true);

  it("reports every backend SERVING and status ok when all are up", async () => {
    expect(await health()).toEqual({
      code: 200,
      body: { status: "ok", services: { auth: "SERVING", content: "SERVING", ingest: "SERVING" } },
    });
  });

  it("stays ready with ingest away: cached reads 200, events 503 with Retry-After", async () => {
    const warm = await read("en");
    expect(warm.status).toBe(200);
    await warm.body?.cancel();

    await cluster.processes.ingest.stop();
    await seen("ingest", (s) => s !== "SERVING");
    const probes: Tally = {};
    const reads: Tally = {};
    const events: Tally = {};
    let retryAfter = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const probe = await health();
      count(probes, `${probe.code} ${probe.body.status}`);
      expect(probe.body.services).toMatchObject({ auth: "SERVING", content: "SERVING" });
      expect(probe.body.services.ingest).toMatch(/^(NOT_SERVING|UNREACHABLE)$/);
      count(reads, await answerKey(await read("en")));
      const event = await sendEvent(cluster.url, uniqueId("away-"));
      if (event.headers.get("retry-after") === "1") retryAfter++;
      count(events, await answerKey(event));
    }
    console.log(
      `[readiness ingest away] /healthz ${JSON.stringify(probes)}, cached reads ` +
        `${JSON.stringify(reads)}, events ${JSON.stringify(events)} (Retry-After on ${retryAfter})`,
    );
    expect(probes).toEqual({ "200 degraded": ROUNDS });
    expect(reads).toEqual({ "200": ROUNDS });
    expect(events).toEqual({ "503 service_unavailable": ROUNDS });
    expect(retryAfter).toBe(ROUNDS);

    await cluster.start("ingest");
    await seen("ingest", (s) => s === "SERVING");
    expect(await health()).toMatchObject({ code: 200, body: { status: "ok" } });
    const event = await sendEvent(cluster.url, uniqueId("back-"));
    expect(event.status).toBe(200);
    await event.body?.cancel();
  }, 90_000);

  it("stays ready with content away: hot reads 200, cold reads 503", async () => {
    const warm = await read("en");
    expect(warm.status).toBe(200);
    const body = await warm.text();

    await cluster.processes.content.stop();
    await seen("content", (s) => s !== "SERVING");
    const probes: Tally = {};
    const hot: Tally = {};
    for (let i = 0; i < ROUNDS; i++) {
      const probe = await health();
      count(probes, `${probe.code} ${probe.body.status}`);
      const again = await read("en");
      if (again.status === 200) expect(await again.text()).toBe(body);
      else await again.body?.cancel();
      count(hot, again.status);
    }
    // Never read before: it needs content-service.
    const cold = await answerKey(await read("de"));
    console.log(
      `[readiness content away] /healthz ${JSON.stringify(probes)}, hot reads ` +
        `${JSON.stringify(hot)}, cold read ${cold}`,
    );
    expect(probes).toEqual({ "200 degraded": ROUNDS });
    expect(hot).toEqual({ "200": ROUNDS });
    expect(cold).toBe("503 service_unavailable");
  }, 90_000);

  it(
    "starts unready while a backend has not served yet, and becomes ready when it does",
    async () => {
      // content is still away from the test before.
      expect((await health()).body.services.content).not.toBe("SERVING");
      await cluster.processes.gateway.stop();
      await cluster.start("gateway");
      const starting = await health();
      expect(starting.code).toBe(503);
      expect(starting.body.status).toBe("unavailable");
      expect(starting.body.services).toMatchObject({ auth: "SERVING", ingest: "SERVING" });
      expect(starting.body.services.content).not.toBe("SERVING");

      await cluster.start("content");
      await expect.poll(async () => (await health()).code, { timeout: 15_000, interval: 200 })
        .toBe(200);
      expect((await health()).body.status).toBe("ok");
      const read200 = await read("de");
      expect(read200.status).toBe(200);
      await read200.body?.cancel();
      console.log(
        `[readiness start] a gateway started with content away answered ${starting.code} ` +
          `${starting.body.status} (content ${starting.body.services.content}), 200 ok once it served`,
      );
    },
    90_000,
  );
});
