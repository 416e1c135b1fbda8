/**
 * The chart's series from the answers: every bucket of the range (the
 * answer's time labels, so a bucket without data is a 0 rather than a gap),
 * and the compared range's buckets matched by position, as the API matches a
 * row with its comparison.
 */
import type { Answer } from "./api.ts";

export interface Series {
  labels: string[];
  values: number[];
  /** The compared range's labels and values, position by position; null past its end. */
  comparedLabels?: (string | null)[];
  compared?: (number | null)[];
}

/** What the chart reads of an answer. */
type Buckets = Pick<Answer, "results" | "meta">;

function byLabel(answer: Buckets): { labels: string[]; values: number[] } {
  const found = new Map<string, number>();
  for (const row of answer.results) {
    const value = row.metrics[0];
    if (row.dimensions[0] !== null && typeof value === "number") {
      found.set(row.dimensions[0], value);
    }
  }
  const labels = answer.meta.timeLabels ?? [...found.keys()];
  return { labels, values: labels.map((label) => found.get(label) ?? 0) };
}

export function seriesOf(answer: Buckets, comparedAnswer?: Buckets): Series {
  const now = byLabel(answer);
  if (!comparedAnswer) return now;
  const before = byLabel(comparedAnswer);
  return {
    ...now,
    comparedLabels: now.labels.map((_, i) => before.labels[i] ?? null),
    compared: now.labels.map((_, i) => i < before.values.length ? before.values[i] : null),
  };
}
