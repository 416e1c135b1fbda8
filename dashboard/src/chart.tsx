/// <reference lib="dom" />
/**
 * The chart: the chosen metric over the range's buckets (uPlot, bundled),
 * the compared range as a second, dashed series, an interval switch where
 * more than one interval fits, and the same numbers as a table for screen
 * readers and keyboards (the canvas is a picture of that table).
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { formatDuration, formatMetric, formatTimeLabel, METRIC_LABELS } from "./format.ts";
import type { Series } from "./series.ts";
import type { Interval, MetricName } from "./state.ts";

export interface ChartProps {
  series: Series;
  metric: MetricName;
  interval: Interval;
  intervals: Interval[];
  onInterval: (interval: Interval) => void;
  /** Words for the two periods, e.g. "21 Nov – 27 Nov 2026". */
  period: string;
  comparedPeriod?: string;
}

const INTERVAL_LABELS: Record<Interval, string> = {
  minute: "Minutes",
  hour: "Hours",
  day: "Days",
  week: "Weeks",
  month: "Months",
};

function axisValue(metric: string, value: number): string {
  if (metric === "visit_duration") return formatDuration(value);
  if (metric === "bounce_rate" || metric === "conversion_rate") return `${value}%`;
  return String(value);
}

function labelOf(interval: Interval, label: string | null, days: boolean): string {
  if (label === null) return "";
  const text = formatTimeLabel(label, days && (interval === "hour" || interval === "minute"));
  return interval === "week" ? `week of ${text}` : text;
}

/** The canvas; redrawn when the series change, resized with its box. */
function Plot(props: { series: Series; metric: string; interval: Interval; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current!;
    const { series, metric, interval } = props;
    const manyDays = new Set(series.labels.map((l) => l.slice(0, 10))).size > 1;
    const x = series.labels.map((_, i) => i);
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: element.clientWidth < 500 ? 200 : 260,
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: {
          x: { time: false },
          y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
        },
        axes: [
          {
            // One tick per whole bucket, as many as fit 90 px apart.
            splits: (u) => {
              const step = Math.max(1, Math.ceil(x.length / Math.max(1, u.width / 90)));
              return x.filter((i) => i % step === 0);
            },
            values: (_u, ticks) =>
              ticks.map((i) => labelOf(interval, series.labels[i] ?? null, manyDays)),
            stroke: "#4b5563",
            grid: { stroke: "#f3f4f6" },
          },
          {
            values: (_u, ticks) => ticks.map((v) => axisValue(metric, v)),
            stroke: "#4b5563",
            grid: { stroke: "#f3f4f6" },
            size: 60,
          },
        ],
        series: [
          {},
          { label: props.label, stroke: "#2563eb", width: 2, fill: "rgba(37, 99, 235, 0.08)" },
          ...(series.compared
            ? [{ label: "compared", stroke: "#6b7280", width: 1.5, dash: [6, 4] }]
            : []),
        ],
      },
      [x, series.values, ...(series.compared ? [series.compared] : [])] as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() => {
      plot.setSize({
        width: Math.max(280, element.clientWidth),
        height: element.clientWidth < 500 ? 200 : 260,
      });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.series, props.metric, props.interval]);
  return <div class="plot" ref={box} aria-hidden="true" />;
}

export function Chart(props: ChartProps) {
  const { series, metric, interval } = props;
  const label = METRIC_LABELS[metric];
  const manyDays = new Set(series.labels.map((l) => l.slice(0, 10))).size > 1;
  return (
    <section class="chart panel" aria-labelledby="chart-title" data-testid="chart">
      <div class="panel-head">
        <h2 id="chart-title">{label} per {interval}</h2>
        {props.intervals.length > 1 && (
          <div class="segmented" role="group" aria-label="Interval">
            {props.intervals.map((i) => (
              <button
                type="button"
                key={i}
                aria-pressed={i === interval}
                onClick={() => props.onInterval(i)}
              >
                {INTERVAL_LABELS[i]}
              </button>
            ))}
          </div>
        )}
      </div>
      <p class="legend">
        <span class="swatch now" aria-hidden="true" /> {props.period}
        {props.comparedPeriod && (
          <>
            {" "}
            <span class="swatch before" aria-hidden="true" /> {props.comparedPeriod}
          </>
        )}
      </p>
      {series.labels.length > 0
        ? <Plot series={series} metric={metric} interval={interval} label={label} />
        : <p class="empty">No data in this range.</p>}
      <details class="chart-table">
        <summary>The chart as a table</summary>
        <table data-testid="chart-table">
          <caption class="visually-hidden">{label} per {interval}</caption>
          <thead>
            <tr>
              <th scope="col">Period</th>
              <th scope="col">{label}</th>
              {series.compared && <th scope="col">Compared period</th>}
              {series.compared && <th scope="col">{label} then</th>}
            </tr>
          </thead>
          <tbody>
            {series.labels.map((bucket, i) => (
              <tr key={bucket} data-value={bucket}>
                <th scope="row">{labelOf(interval, bucket, manyDays)}</th>
                <td>{formatMetric(metric, series.values[i])}</td>
                {series.compared && <td>{labelOf(interval, series.comparedLabels![i], true)}</td>}
                {series.compared && (
                  <td>
                    {series.compared[i] === null ? "–" : formatMetric(metric, series.compared[i]!)}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  );
}
