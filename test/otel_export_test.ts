/**
 * The standard OpenTelemetry settings: with OTEL_EXPORTER_OTLP_ENDPOINT set,
 * `deno task start` exports over OTLP/HTTP (here to a stand-in collector
 * that records what it is sent), and SIGTERM still stops it cleanly.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type StartedProcess, startTask } from "./helpers/process.ts";

describe("OpenTelemetry export", () => {
  const received: string[] = [];
  const collector = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.arrayBuffer();
    received.push(new URL(req.url).pathname);
    return new Response(null, { status: 200 });
  });
  const dataDir = Deno.makeTempDirSync({ prefix: "crm-otel-" });
  let running: StartedProcess | undefined;

  afterAll(async () => {
    try {
      running?.process.kill("SIGKILL");
    } catch { /* stopped */ }
    await collector.shutdown();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  });

  it("sends traces and metrics to the OTLP endpoint and stops on SIGTERM", async () => {
    running = await startTask([], {
      CRM_DATA_DIR: dataDir,
      DATABASE_URL: "",
      REDIS_URL: "",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.addr.port}`,
      OTEL_SERVICE_NAME: "crm-test",
      OTEL_BSP_SCHEDULE_DELAY: "200",
      OTEL_METRIC_EXPORT_INTERVAL: "500",
    }, { direct: true });
    const health = await fetch(`${running.url}/healthz`);
    expect(health.status).toBe(200);
    await health.body?.cancel();
    await expect.poll(() => received.includes("/v1/traces"), { timeout: 20_000, interval: 250 })
      .toBe(true);
    await expect.poll(() => received.includes("/v1/metrics"), { timeout: 20_000, interval: 250 })
      .toBe(true);
    expect(await running.stop()).toBe(0);
    // The child that did the work is gone too: its gateway no longer answers.
    await expect(fetch(`${running.url}/livez`)).rejects.toThrow();
    running = undefined;
  }, 60_000);
});
