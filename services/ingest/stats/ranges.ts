/**
 * A query's date range, and its compared range, as local days and instants
 * in the zone the reports are read in. Pure: "now" and the first day with
 * data come in as arguments.
 */
import { localDay, parseDay, startOfDay } from "./calendar.ts";
import { type CompareQuery, type DateRangeQuery, isRealtime } from "./query.ts";

const MINUTE_MS = 60_000;

export interface ResolvedRange {
  /** The local days the range covers (meta.dateRange). */
  firstDay: Temporal.PlainDate;
  lastDay: Temporal.PlainDate;
  /** The instants counted: [startMs, endMs). */
  startMs: number;
  endMs: number;
  /** A realtime range ("30m", "5m"): its ends are instants, not local midnights. */
  realtime: boolean;
}

/** Local days [first, last] in `zone` as a range. */
export function daysRange(
  first: Temporal.PlainDate,
  last: Temporal.PlainDate,
  zone: string,
): ResolvedRange {
  return {
    firstDay: first,
    lastDay: last,
    startMs: startOfDay(first, zone),
    endMs: startOfDay(last.add({ days: 1 }), zone),
    realtime: false,
  };
}

/** A range of given days ["YYYY-MM-DD", "YYYY-MM-DD"] in `zone`. */
export function daysOf(range: DateRangeQuery, zone: string): ResolvedRange {
  if (!("first" in range)) throw new Error(`a range of days is needed, not "${range.preset}"`);
  return daysRange(parseDay(range.first)!, parseDay(range.last)!, zone);
}

/** An instant range [startMs, endMs) as a realtime range. */
function instantsRange(startMs: number, endMs: number, zone: string): ResolvedRange {
  return {
    firstDay: localDay(startMs, zone),
    lastDay: localDay(Math.max(startMs, endMs - 1), zone),
    startMs,
    endMs,
    realtime: true,
  };
}

/**
 * The range a query asks for at `nowMs`. "all" starts on the first local day
 * with data (or today), found by `firstDataMs` only when asked; the realtime
 * ranges hold the rows received in the last 30 or 5 minutes, up to and
 * including `nowMs`.
 */
export function resolveRange(
  range: DateRangeQuery,
  zone: string,
  nowMs: number,
  firstDataMs: () => Promise<number | undefined>,
): Promise<ResolvedRange> | ResolvedRange {
  const today = localDay(nowMs, zone);
  const days = (first: Temporal.PlainDate, last = today) => daysRange(first, last, zone);
  if ("first" in range) return days(parseDay(range.first)!, parseDay(range.last)!);
  if (isRealtime(range)) {
    const minutes = range.preset === "30m" ? 30 : 5;
    return instantsRange(nowMs - minutes * MINUTE_MS, nowMs + 1, zone);
  }
  switch (range.preset) {
    case "today":
      return days(today);
    case "yesterday": {
      const day = today.subtract({ days: 1 });
      return days(day, day);
    }
    case "7d":
      return days(today.subtract({ days: 6 }));
    case "30d":
      return days(today.subtract({ days: 29 }));
    case "month":
      return days(today.with({ day: 1 }));
    case "year":
      return days(today.with({ month: 1, day: 1 }));
    case "all":
      return firstDataMs().then((first) => {
        const day = first === undefined ? today : localDay(first, zone);
        return days(Temporal.PlainDate.compare(day, today) < 0 ? day : today);
      });
    default:
      throw new Error(`unknown range ${range.preset}`);
  }
}

/** The same local wall time a year earlier (29 February becomes 28 February). */
function yearEarlier(ms: number, zone: string): number {
  return Temporal.Instant.fromEpochMilliseconds(ms).toZonedDateTimeISO(zone)
    .subtract({ years: 1 }).epochMilliseconds;
}

/**
 * The range include.compare names: the previous period (as many local days
 * as the range, ending the day before it starts; for a realtime range the
 * same length of time just before it), the same local dates a year earlier,
 * or the given days.
 */
export function comparedRange(
  compare: CompareQuery,
  range: ResolvedRange,
  zone: string,
): ResolvedRange {
  if ("first" in compare) return daysRange(parseDay(compare.first)!, parseDay(compare.last)!, zone);
  if (range.realtime) {
    // The window's nominal length: it ends 1 ms after now, so as to include now.
    const length = range.endMs - 1 - range.startMs;
    return compare.preset === "previous_period"
      ? instantsRange(range.startMs - length, range.startMs, zone)
      : instantsRange(yearEarlier(range.startMs, zone), yearEarlier(range.endMs, zone), zone);
  }
  if (compare.preset === "previous_period") {
    const length = range.firstDay.until(range.lastDay).days + 1;
    const last = range.firstDay.subtract({ days: 1 });
    return daysRange(last.subtract({ days: length - 1 }), last, zone);
  }
  return daysRange(
    range.firstDay.subtract({ years: 1 }),
    range.lastDay.subtract({ years: 1 }),
    zone,
  );
}

/** A local time with its offset, to the second: "2026-11-26T11:30:00+01:00". */
export function localTimeText(ms: number, zone: string): string {
  const at = Temporal.Instant.fromEpochMilliseconds(ms).toZonedDateTimeISO(zone);
  return `${at.toPlainDateTime().toString({ smallestUnit: "second" })}${at.offset}`;
}
