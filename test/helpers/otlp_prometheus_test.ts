import { describe, expect, it } from "vitest";
import {
  metricNames,
  prometheusName,
  prometheusSeries,
  promtoolValues,
} from "./otlp_prometheus.ts";

describe("prometheusName", () => {
  it("applies the OpenTelemetry-to-Prometheus naming rules", () => {
    expect(prometheusName("http.server.request.duration", "s", "histogram"))
      .toBe("http_server_request_duration_seconds");
    expect(prometheusName("crm.ingest.items", "{item}", "counter")).toBe("crm_ingest_items_total");
    expect(prometheusName("crm.redis.fallback", "{state}", "gauge")).toBe("crm_redis_fallback");
    // The trap: a gauge of unit 1 is a ratio to Prometheus.
    expect(prometheusName("crm.redis.fallback", "1", "gauge")).toBe("crm_redis_fallback_ratio");
    expect(prometheusName("rpc.server.duration", "ms", "histogram"))
      .toBe("rpc_server_duration_milliseconds");
    expect(prometheusName("http.server.request.body.size", "By", "histogram"))
      .toBe("http_server_request_body_size_bytes");
    expect(prometheusName("requests.total", "1", "counter")).toBe("requests_total");
  });
});

describe("prometheusSeries", () => {
  const resource = {
    attributes: [
      { key: "service.name", value: { stringValue: "crm-gateway" } },
      { key: "service.instance.id", value: { stringValue: "pod-1" } },
    ],
  };
  const body = (count: number) => ({
    resourceMetrics: [{
      resource,
      scopeMetrics: [{
        scope: { name: "crm" },
        metrics: [
          {
            name: "http.server.request.duration",
            unit: "s",
            histogram: {
              aggregationTemporality: 2,
              dataPoints: [{
                attributes: [{ key: "http.route", value: { stringValue: "/x" } }],
                count: String(count),
                sum: count * 0.01,
                explicitBounds: [0.005, 0.05],
                bucketCounts: [String(count - 1), "1", "0"],
              }],
            },
          },
          {
            name: "crm.ingest.items",
            unit: "{item}",
            sum: {
              aggregationTemporality: 2,
              isMonotonic: true,
              dataPoints: [{ asInt: String(count * 2), attributes: [] }],
            },
          },
        ],
      }],
    }],
  });

  it("turns histograms into cumulative buckets, sums into counters, with job and instance", () => {
    const series = prometheusSeries([body(3), body(5)]);
    const byName = (name: string, le?: string) =>
      series.find((s) => s.name === name && s.labels.le === le);
    expect(byName("http_server_request_duration_seconds_bucket", "0.005")?.values).toEqual([2, 4]);
    expect(byName("http_server_request_duration_seconds_bucket", "0.05")?.values).toEqual([3, 5]);
    expect(byName("http_server_request_duration_seconds_bucket", "+Inf")?.values).toEqual([3, 5]);
    expect(byName("http_server_request_duration_seconds_count")).toMatchObject({
      labels: { http_route: "/x", job: "crm-gateway", instance: "pod-1", otel_scope_name: "crm" },
      values: [3, 5],
    });
    expect(byName("crm_ingest_items_total")?.values).toEqual([6, 10]);
  });

  it("refuses delta temporality, which would need a running sum", () => {
    const delta = body(1);
    delta.resourceMetrics[0].scopeMetrics[0].metrics[1].sum!.aggregationTemporality = 1;
    expect(() => prometheusSeries([delta])).toThrow(/cumulative/);
  });
});

describe("promtoolValues", () => {
  it("writes one value a step, _ where the series had none yet", () => {
    expect(promtoolValues([undefined, 1, 2], 4)).toBe("_ 1 2 _");
  });
});

describe("metricNames", () => {
  it("finds the metric names of an expression and nothing else", () => {
    expect(metricNames(
      'histogram_quantile(0.99, sum by (le, http_route) (rate(http_server_request_duration_seconds_bucket{otel_scope_name="crm", http_route=~"/a.*"}[5m])))',
    )).toEqual(["http_server_request_duration_seconds_bucket"]);
    expect(metricNames("crm_redis_fallback == 1 and on (job) up offset 5m")).toEqual([
      "crm_redis_fallback",
      "up",
    ]);
    expect(metricNames("sum(rate(a_total[1h])) / sum(rate(b_total[1h])) > 14.4 * 0.001"))
      .toEqual(["a_total", "b_total"]);
  });
});
