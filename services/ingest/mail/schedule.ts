/**
 * When email reports fall due, in the site's time zone. Pure: the instant
 * and the zone come in as arguments.
 *
 * A weekly report covers Monday to Sunday and is due on the following Monday
 * at 09:00 local time; a monthly one covers a calendar month and is due on
 * the 1st of the next at 09:00. A day is whatever the zone makes it (23 or 25
 * hours on a daylight-saving change), so periods are local dates and the
 * send time is the local wall-clock time, whatever the offset that day.
 */

export type Every = "week" | "month";

export const EVERY: readonly Every[] = ["week", "month"];

/** Local hour of the day a report is due. */
export const SEND_HOUR = 9;

export interface Period {
  every: Every;
  /** First and last local day covered, inclusive. */
  first: Temporal.PlainDate;
  last: Temporal.PlainDate;
  /** The instant (Unix ms) the report is due: 09:00 local on the day after `last`. */
  sendAt: number;
}

/** The local date in `zone` at an instant. */
function localDate(ms: number, zone: string): Temporal.PlainDate {
  return Temporal.Instant.fromEpochMilliseconds(ms).toZonedDateTimeISO(zone).toPlainDate();
}

/** 09:00 local on `day` (a wall time skipped by a change falls forward, as usual). */
function sendTime(day: Temporal.PlainDate, zone: string): number {
  return day.toPlainDateTime({ hour: SEND_HOUR }).toZonedDateTime(zone, {
    disambiguation: "compatible",
  }).epochMilliseconds;
}

/** The period of `every` that holds local day `day`. */
export function periodHolding(every: Every, day: Temporal.PlainDate, zone: string): Period {
  const first = every === "week" ? day.subtract({ days: day.dayOfWeek - 1 }) : day.with({ day: 1 });
  const next = every === "week" ? first.add({ weeks: 1 }) : first.add({ months: 1 });
  return { every, first, last: next.subtract({ days: 1 }), sendAt: sendTime(next, zone) };
}

/** The period just before `period`. */
export function previousPeriod(period: Period, zone: string): Period {
  return periodHolding(period.every, period.first.subtract({ days: 1 }), zone);
}

/**
 * The last complete period at `nowMs`: the one that ended before today
 * (local) began. What `admin reports send` sends, whatever the hour.
 */
export function lastCompletePeriod(every: Every, zone: string, nowMs: number): Period {
  return previousPeriod(periodHolding(every, localDate(nowMs, zone), zone), zone);
}

/**
 * The latest period whose report is due at `nowMs` (its send time has
 * come), or undefined when that send time is before `sinceMs`: a recipient
 * added after a period's send time first gets the next period's report.
 * A system that was down at a send time sends that report when it is back,
 * until the next one is due.
 */
export function duePeriod(
  every: Every,
  zone: string,
  { nowMs, sinceMs }: { nowMs: number; sinceMs: number },
): Period | undefined {
  let period = lastCompletePeriod(every, zone, nowMs);
  if (period.sendAt > nowMs) period = previousPeriod(period, zone);
  return period.sendAt >= sinceMs ? period : undefined;
}

/** The period as stored with each mail (one mail per recipient and period): "2026-11-16/2026-11-22". */
export function periodKey(period: Pick<Period, "first" | "last">): string {
  return `${period.first}/${period.last}`;
}
