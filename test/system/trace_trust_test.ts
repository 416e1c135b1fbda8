/**
 * TRACE_TRUST_PARENT against a real gateway process (`deno task service
 * gateway`, as the chart runs it) exporting OTLP/JSON to a stand-in
 * collector, at a sampling ratio of 0.1:
 *
 * - with 0 (the chart's default), requests that each carry a sampled
 *   traceparent, their trace ids picked so that a sampler deciding from the
 *   trace id would keep every one, are kept at the gateway's ratio and not
 *   at 100%, in the caller's trace: a caller cannot force a trace;
 * - with 1, every sampled parent is honoured.
 *
 * The probe /livez answers without a backend, so the gateway runs alone.
 */
import { afterAll, describe, expect, it } from "vitest";
import { startService } from "../helpers/process.ts";
import { type OtlpJson, startOtlpReceiver } from "../helpers/otlp_receiver.ts";
import { UNTRUSTED_PARENT_SPAN } from "../../services/gateway/trace_parent.ts";

const REQUESTS = 400;
const RATIO = 0.1;

/** A traceparent a trace-id ratio sampler keeps at any ratio: its last 16 hex digits are 0. */
const forcingParent = (i: number) => {
  const traceId = i.toString(16).padStart(16, "0") + "0".repeat(16);
  return { traceId, header: `00-${traceId}-${"ab".repeat(8)}-01` };
};

interface ExportedSpan {
  traceId: string;
  name: string;
  parentSpanId: string;
}

function spansOf(bodies: OtlpJson[]): ExportedSpan[] {
  return bodies.flatMap((body) =>
    (body.resourceSpans ?? []).flatMap((rs: OtlpJson) =>
      (rs.scopeSpans ?? []).flatMap((ss: OtlpJson) => ss.spans ?? [])
    )
  );
}

describe("TRACE_TRUST_PARENT on a gateway process", () => {
  const collector = startOtlpReceiver();
  afterAll(() => collector.close());

  async function sendAll(trust: "0" | "1") {
    const gateway = await startService("gateway", {
      PORT: "0",
      AUTH_URL: "http://127.0.0.1:9",
      CONTENT_URL: "http://127.0.0.1:9",
      INGEST_URL: "http://127.0.0.1:9",
      TRACE_TRUST_PARENT: trust,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: String(RATIO),
      OTEL_SERVICE_NAME: `crm-gateway-trust-${trust}`,
      OTEL_BSP_SCHEDULE_DELAY: "200",
      OTEL_DENO_CONSOLE: "ignore",
    });
    const sent: string[] = [];
    try {
      for (let i = 0; i < REQUESTS; i++) {
        const parent = forcingParent(i + (trust === "0" ? 0 : REQUESTS));
        const answer = await fetch(`${gateway.url}/livez`, {
          headers: { traceparent: parent.header },
        });
        expect(answer.status).toBe(200);
        await answer.body?.cancel();
        sent.push(parent.traceId);
      }
    } finally {
      // SIGTERM flushes the exporter before the process ends.
      expect(await gateway.stop()).toBe(0);
    }
    const service = `crm-gateway-trust-${trust}`;
    const mine = collector.received("/v1/traces").filter((body) =>
      body.resourceSpans?.some((rs: OtlpJson) =>
        rs.resource?.attributes?.some((a: OtlpJson) =>
          a.key === "service.name" && a.value.stringValue === service
        )
      )
    );
    return { sent: new Set(sent), spans: spansOf(mine) };
  }

  it(
    "with 0, keeps a caller's sampled traces at the gateway's ratio, in the caller's trace",
    async () => {
      const { sent, spans } = await sendAll("0");
      const kept = new Set(spans.filter((s) => sent.has(s.traceId)).map((s) => s.traceId));
      // Binomial(400, 0.1): 40 expected; outside 10..90 has a chance far below 10^-9.
      expect(kept.size).toBeGreaterThanOrEqual(10);
      expect(kept.size).toBeLessThanOrEqual(90);
      // Each kept one is the gateway's server span under the caller's span, named by its route.
      const server = spans.filter((s) => sent.has(s.traceId));
      expect(server.every((s) => s.parentSpanId === "ab".repeat(8))).toBe(true);
      expect(new Set(server.map((s) => s.name))).toEqual(new Set(["GET /livez"]));
      // The runtime's own span of each kept request is a trace of its own, and only of those.
      const shadows = spans.filter((s) => s.name.includes(UNTRUSTED_PARENT_SPAN));
      expect(shadows.length).toBe(kept.size);
      expect(shadows.every((s) => !sent.has(s.traceId))).toBe(true);
      console.log(
        `[trace trust 0] ${REQUESTS} requests with a sampled traceparent a trace-id ratio ` +
          `sampler always keeps: ${kept.size} kept at a ratio of ${RATIO}`,
      );
    },
    180_000,
  );

  it("with 1, honours every sampled parent", async () => {
    const { sent, spans } = await sendAll("1");
    const kept = new Set(spans.filter((s) => sent.has(s.traceId)).map((s) => s.traceId));
    expect(kept.size).toBe(REQUESTS);
    expect(spans.some((s) => s.name.includes(UNTRUSTED_PARENT_SPAN))).toBe(false);
    console.log(`[trace trust 1] ${REQUESTS} sampled parents, ${kept.size} kept`);
  }, 180_000);
});
