/**
 * Local days, weeks, months and hours of an IANA time zone, as instants.
 * Every zone computation of the reports happens here, with the JavaScript
 * runtime's time zone data (Temporal), and never with the server's or the
 * database session's zone: the database only compares instants with the
 * bucket boundaries computed here. A day is whatever the zone makes it (23 or
 * 25 hours on a daylight-saving change); an hour or minute bucket is a local
 * hour or minute at one offset, so the hour repeated when clocks go back is
 * two buckets.
 */
import type { TimeDimension } from "../../lib/stats/vocabulary.ts";

/** The grain of a time dimension's buckets: its name after `time:`. */
export type Grain = TimeDimension extends `time:${infer G}` ? G : never;

const MS_PER_MINUTE = 60_000;
const MS_PER_HOUR = 3_600_000;
const MS_PER_DAY = 86_400_000;

/** "YYYY-MM-DD" of a valid calendar date. */
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The date when `text` is a real calendar day written YYYY-MM-DD, else undefined. */
export function parseDay(text: string): Temporal.PlainDate | undefined {
  const match = DAY.exec(text);
  if (!match) return undefined;
  try {
    return Temporal.PlainDate.from(
      { year: Number(match[1]), month: Number(match[2]), day: Number(match[3]) },
      { overflow: "reject" },
    );
  } catch {
    return undefined;
  }
}

/** The local date in `zone` at an instant. */
export function localDay(ms: number, zone: string): Temporal.PlainDate {
  return Temporal.Instant.fromEpochMilliseconds(ms).toZonedDateTimeISO(zone).toPlainDate();
}

/** The first instant of a local day (midnight, or the first time that exists when midnight does not). */
export function startOfDay(day: Temporal.PlainDate, zone: string): number {
  return day.toZonedDateTime(zone).epochMilliseconds;
}

/** A stretch of time during which the zone's offset stays the same. */
interface Stretch {
  from: number;
  to: number;
  offsetMs: number;
}

/** The offsets in force over [from, to), in order. */
function stretches(zone: string, from: number, to: number): Stretch[] {
  const out: Stretch[] = [];
  let at = Temporal.Instant.fromEpochMilliseconds(from).toZonedDateTimeISO(zone);
  while (at.epochMilliseconds < to) {
    const next = at.getTimeZoneTransition("next");
    const end = next === null ? to : Math.min(to, next.epochMilliseconds);
    out.push({ from: at.epochMilliseconds, to: end, offsetMs: at.offsetNanoseconds / 1e6 });
    if (next === null) break;
    at = next;
  }
  return out;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/** "+05:45", "-03:00", "+00:00" */
export function offsetText(offsetMs: number): string {
  const sign = offsetMs < 0 ? "-" : "+";
  const minutes = Math.round(Math.abs(offsetMs) / MS_PER_MINUTE);
  return `${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

/** Wall-clock fields of a local time given as milliseconds since 1970 on the local clock. */
function wall(localMs: number) {
  const d = new Date(localMs);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    weekday: (d.getUTCDay() + 6) % 7, // Monday 0
  };
}

function yearText(year: number): string {
  return year < 0 ? `-${pad(-year, 6)}` : year > 9999 ? `+${pad(year, 6)}` : pad(year, 4);
}

/** The label of the bucket a local time falls in. */
function labelAt(grain: Grain, localMs: number, offsetMs: number): string {
  const w = wall(localMs);
  const date = `${yearText(w.year)}-${pad(w.month)}-${pad(w.day)}`;
  switch (grain) {
    case "minute":
      return `${date}T${pad(w.hour)}:${pad(w.minute)}:00${offsetText(offsetMs)}`;
    case "hour":
      return `${date}T${pad(w.hour)}:00:00${offsetText(offsetMs)}`;
    case "day":
      return date;
    case "week": {
      const monday = wall(localMs - w.weekday * MS_PER_DAY);
      return `${yearText(monday.year)}-${pad(monday.month)}-${pad(monday.day)}`;
    }
    case "month":
      return `${yearText(w.year)}-${pad(w.month)}`;
  }
}

/** The local times in (fromLocal, toLocal) where a bucket of this grain may begin. */
function* boundaries(grain: Grain, fromLocal: number, toLocal: number): Generator<number> {
  const step = grain === "minute" ? MS_PER_MINUTE : grain === "hour" ? MS_PER_HOUR : MS_PER_DAY;
  let t = Math.floor(fromLocal / step) * step + step;
  for (; t < toLocal; t += step) yield t;
}

/**
 * The buckets of a grain over [from, to): ascending start instants (the
 * first is `from`), each with the index of its label in `labels`. Local days
 * start at local midnight, weeks on Monday, months on the 1st; hours at each
 * local hour and wherever the offset changes. A label met again later (a
 * clock set back across midnight) keeps its first index, so it stays one
 * group.
 */
export interface Buckets {
  starts: number[];
  labelIds: number[];
  labels: string[];
}

export function bucketsOf(grain: Grain, zone: string, from: number, to: number): Buckets {
  const starts: number[] = [];
  const labelIds: number[] = [];
  const labels: string[] = [];
  const ids = new Map<string, number>();
  const add = (at: number, label: string) => {
    let id = ids.get(label);
    if (id === labelIds[labelIds.length - 1] && id !== undefined) return;
    if (id === undefined) {
      id = labels.length;
      ids.set(label, id);
      labels.push(label);
    }
    starts.push(at);
    labelIds.push(id);
  };
  for (const s of stretches(zone, from, to)) {
    add(s.from, labelAt(grain, s.from + s.offsetMs, s.offsetMs));
    for (const local of boundaries(grain, s.from + s.offsetMs, s.to + s.offsetMs)) {
      add(local - s.offsetMs, labelAt(grain, local, s.offsetMs));
    }
  }
  return { starts, labelIds, labels };
}

/** The bucket label of one instant (for tests and single values). */
export function labelOf(grain: Grain, zone: string, ms: number): string {
  const offsetMs = Temporal.Instant.fromEpochMilliseconds(ms).toZonedDateTimeISO(zone)
    .offsetNanoseconds / 1e6;
  return labelAt(grain, ms + offsetMs, offsetMs);
}

/** Chronological order of two labels of one grain (hour and minute labels carry their offsets). */
export function compareLabels(grain: Grain, a: string, b: string): number {
  if (grain !== "hour" && grain !== "minute") return a < b ? -1 : a > b ? 1 : 0;
  return Temporal.Instant.compare(Temporal.Instant.from(a), Temporal.Instant.from(b));
}
