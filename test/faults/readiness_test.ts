/**
 * Readiness that degrades instead of failing (docs/operations.md,
 * "Readiness"), with the four services as separate processes and a backend
 * stopped for real: the gateway's /healthz stays 200 (`degraded`, naming the
 * backend that is away) while it can still serve, cached content reads keep
 * answering 200, and what needs the missing backend answers 503 with
 * Retry-After. A gateway started while content-service is away is ready at
 * once, degraded; one started while auth-service is away is not ready until
 * auth has answered SERVING once.
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
    "starts ready but degraded with content away, and unready until auth has served",
    async () => {
      // content is still away from the test before.
      expect((await health()).body.services.content).not.toBe("SERVING");
      await cluster.processes.gateway.stop();
      await cluster.start("gateway");
      const degraded = await health();
      expect(degraded.code).toBe(200);
      expect(degraded.body.status).toBe("degraded");
      expect(degraded.body.services).toMatchObject({ auth: "SERVING", ingest: "SERVING" });
      expect(degraded.body.services.content).not.toBe("SERVING");

      await cluster.start("content");
      await seen("content", (s) => s === "SERVING");
      expect((await health()).body.status).toBe("ok");
      const read200 = await read("de");
      expect(read200.status).toBe(200);
      await read200.body?.cancel();

      // Without auth no request can be served: a gateway started then is not ready.
      await cluster.processes.auth.stop();
      await cluster.processes.gateway.stop();
      await cluster.start("gateway");
      const starting = await health();
      expect(starting.code).toBe(503);
      expect(starting.body.status).toBe("unavailable");
      expect(starting.body.services.auth).not.toBe("SERVING");
      await cluster.start("auth");
      await expect.poll(async () => (await health()).code, { timeout: 15_000, interval: 200 })
        .toBe(200);
      expect((await health()).body.status).toBe("ok");
      console.log(
        `[readiness start] with content away a new gateway answered ${degraded.code} ` +
          `${degraded.body.status}; with auth away ${starting.code} ${starting.body.status}, ` +
          `200 ok once auth served`,
      );
    },
    90_000,
  );
});
