/**
 * The top cards: each metric of the range with its change against the
 * compared range, green where the change is good news and red where it is
 * not (arrows and words too, never color alone). A card of a metric the
 * chart can draw is a button that puts it on the chart.
 */
import type { ResultRow } from "./api.ts";
import {
  changeTone,
  describeChange,
  formatChange,
  formatMetric,
  formatMoney,
  type Metric,
  METRIC_LABELS,
} from "./format.ts";
import { CHART_METRICS, type ChartMetric, type MetricName } from "./state.ts";

export interface CardsProps {
  metrics: MetricName[];
  row: ResultRow | undefined;
  /** The compared period's words, e.g. "previous period"; undefined without comparison. */
  compared?: string;
  selected: string;
  onSelect: (metric: ChartMetric) => void;
}

function isChartMetric(metric: string): metric is ChartMetric {
  return (CHART_METRICS as readonly string[]).includes(metric);
}

function Change(props: { metric: string; change: number | null; before: string }) {
  const tone = changeTone(props.metric, props.change);
  return (
    <span
      class={`change ${tone}`}
      data-testid="change"
      title={describeChange(props.metric, props.change, props.before)}
    >
      {formatChange(props.metric, props.change)}
      <span class="visually-hidden">
        {` (${describeChange(props.metric, props.change, props.before)})`}
      </span>
    </span>
  );
}

/** Revenue: one line per currency, each with its own change. */
function RevenueValue(
  props: { value: Metric; before?: Metric; change?: Record<string, number | null> },
) {
  const amounts = props.value as Record<string, number>;
  const before = (props.before ?? {}) as Record<string, number>;
  const currencies = [...new Set([...Object.keys(amounts), ...Object.keys(props.change ?? {})])]
    .sort();
  if (currencies.length === 0) return <strong class="value" data-testid="value">0</strong>;
  return (
    <>
      {currencies.map((currency) => (
        <span class="currency" key={currency} data-currency={currency}>
          <strong class="value" data-testid="value">
            {formatMoney(currency, amounts[currency] ?? 0)}
          </strong>
          {props.change && (
            <Change
              metric="revenue"
              change={props.change[currency] ?? null}
              before={formatMoney(currency, before[currency] ?? 0)}
            />
          )}
        </span>
      ))}
    </>
  );
}

export function Cards(props: CardsProps) {
  const { row } = props;
  return (
    <ul class="cards" aria-label="Totals" data-testid="cards">
      {props.metrics.map((metric, i) => {
        const value = row?.metrics[i];
        const comparison = props.compared ? row?.comparison : undefined;
        const before = comparison?.metrics[i];
        const change = comparison?.change[i];
        const label = METRIC_LABELS[metric];
        const body = metric === "revenue" && value !== undefined
          ? (
            <RevenueValue
              value={value}
              before={before}
              change={comparison ? (change ?? {}) as Record<string, number | null> : undefined}
            />
          )
          : (
            <>
              <strong class="value" data-testid="value">
                {value === undefined ? "–" : formatMetric(metric, value)}
              </strong>
              {comparison && (
                <Change
                  metric={metric}
                  change={change as number | null}
                  before={formatMetric(metric, before)}
                />
              )}
            </>
          );
        const content = (
          <>
            <span class="label">{label}</span>
            {body}
          </>
        );
        return (
          <li key={metric} class="card" data-metric={metric}>
            {isChartMetric(metric)
              ? (
                <button
                  type="button"
                  aria-pressed={props.selected === metric}
                  onClick={() => props.onSelect(metric)}
                  title={`Show ${label.toLowerCase()} on the chart`}
                >
                  {content}
                </button>
              )
              : <div class="static">{content}</div>}
          </li>
        );
      })}
    </ul>
  );
}
