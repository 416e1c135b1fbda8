/**
 * Which part of a range the counters query reads per UTC day and which per
 * quarter hour. A UTC day can stand for its 96 quarter hours when it lies
 * wholly inside the range and inside one bucket of each of the query's time
 * dimensions (so its counts land in one group). In UTC every local day is
 * one; in other zones a week's or month's inner days are, and a day cut by
 * a local midnight is read by the quarter hour.
 */

export const DAY_MS = 86_400_000;

/** A half-open span of instants, [from, to), in milliseconds. */
export type Span = [from: number, to: number];

export interface DaySplit {
  /** Runs of whole UTC days, read from the day counters. */
  days: Span[];
  /** The rest of the range, read from the quarter-hour counters. */
  quarters: Span[];
}

/**
 * Splits [from, to) given the bucket starts of each time dimension (each
 * ascending; a dimension's first bucket also takes in the range before it).
 */
export function splitByDays(from: number, to: number, bucketStarts: number[][]): DaySplit {
  // Days before a dimension's first bucket start fall in that bucket only
  // through the engine's clamp; they are read by the quarter hour.
  const firstStart = Math.max(from, ...bucketStarts.map((s) => s[0] ?? from));
  const cuts = [...new Set([from, to, firstStart, ...bucketStarts.flat()])]
    .filter((c) => c >= firstStart && c <= to)
    .sort((a, b) => a - b);
  const days: Span[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const first = Math.ceil(cuts[i] / DAY_MS) * DAY_MS;
    const end = Math.floor(cuts[i + 1] / DAY_MS) * DAY_MS;
    if (end <= first) continue;
    const last = days[days.length - 1];
    if (last && last[1] === first) last[1] = end;
    else days.push([first, end]);
  }
  const quarters: Span[] = [];
  let at = from;
  for (const [a, b] of days) {
    if (a > at) quarters.push([at, a]);
    at = b;
  }
  if (to > at) quarters.push([at, to]);
  return { days, quarters };
}
