/**
 * A panel's list: one row per value with a bar behind it in proportion to
 * the first column, the value a button that filters the whole page by it
 * (a row without a value cannot be filtered by and is plain text).
 * Everything is text: values come from the internet.
 */
import type { ResultRow } from "./api.ts";
import { changeTone, formatChange, valueLabel } from "./format.ts";

export interface Column {
  /** Header text. */
  label: string;
  /** The cell's text for a row (its index in the answer's rows). */
  text: (row: ResultRow, index: number) => string;
  /** A class for the cell (e.g. a change's tone). */
  tone?: (row: ResultRow, index: number) => string | undefined;
}

export interface TopListProps {
  dimension: string;
  /** The dimension's name for one value, e.g. "Channel". */
  name: string;
  /** What a row without a value is called. */
  none?: string;
  rows: ResultRow[];
  columns: Column[];
  /** Filters the page by the row's value. */
  onPick: (value: string) => void;
  testid?: string;
}

function barWidth(rows: ResultRow[], row: ResultRow): string {
  const max = Math.max(...rows.map((r) => (typeof r.metrics[0] === "number" ? r.metrics[0] : 0)));
  const value = typeof row.metrics[0] === "number" ? row.metrics[0] : 0;
  return `${max > 0 ? Math.max(1, Math.round((value / max) * 100)) : 0}%`;
}

export function TopList(props: TopListProps) {
  if (props.rows.length === 0) return <p class="empty">No data in this range.</p>;
  return (
    <div class="scroll">
      <table class="toplist" data-testid={props.testid ?? "toplist"}>
        <thead>
          <tr>
            <th scope="col">{props.name}</th>
            {props.columns.map((c) => <th scope="col" key={c.label}>{c.label}</th>)}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row, i) => {
            const value = row.dimensions[0];
            const label = valueLabel(props.dimension, value, props.none);
            return (
              <tr key={value ?? "\u0000none"} data-value={value ?? ""}>
                <th
                  scope="row"
                  class="bar-cell"
                  style={{ "--bar-width": barWidth(props.rows, row) }}
                >
                  {value === null ? <span class="name none">{label}</span> : (
                    <button
                      type="button"
                      class="name"
                      title={`Filter by ${props.name.toLowerCase()}: ${label}`}
                      onClick={() => props.onPick(value)}
                    >
                      {label}
                    </button>
                  )}
                </th>
                {props.columns.map((c) => (
                  <td key={c.label} class={c.tone?.(row, i)}>{c.text(row, i)}</td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The column of a metric's change against the compared range (for the full lists). */
export function changeColumn(metric: string, index: number): Column {
  const changeOf = (row: ResultRow) => {
    const change = row.comparison?.change[index];
    return typeof change === "number" || change === null ? change : null;
  };
  return {
    label: "Change",
    text: (row) => row.comparison ? formatChange(metric, changeOf(row)) : "–",
    tone: (row) => `change ${row.comparison ? changeTone(metric, changeOf(row)) : "same"}`,
  };
}
