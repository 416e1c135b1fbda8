/**
 * When a traffic alert fires. Pure: the visitors counted, the times and the
 * alert's last firing come in as arguments.
 *
 * - spike: the visitors of the last 30 minutes (as the `30m` range counts
 *   them) reach the threshold;
 * - drop: the visitors of the last 12 hours are below it, once the site is
 *   12 hours old (before that its 12 hours are not all there);
 * - either at most once per 12 hours per alert.
 */
export type AlertKind = "spike" | "drop";

const MINUTE_MS = 60_000;

/** The window each kind counts, in minutes (the webhook's `window`). */
export const WINDOW_MINUTES: Record<AlertKind, number> = { spike: 30, drop: 12 * 60 };

/** The least time between two firings of one alert. */
export const QUIET_MS = 12 * 3600_000;

/** How often alerts are checked. */
export const CHECK_EVERY_MS = MINUTE_MS;

/** The instants a kind counts at `now`: [now − window, now], as the realtime ranges do. */
export function windowOf(kind: AlertKind, now: number): { startMs: number; endMs: number } {
  return { startMs: now - WINDOW_MINUTES[kind] * MINUTE_MS, endMs: now + 1 };
}

/** Whether the site is old enough for a drop alert: its first day of traffic is 12 hours past. */
export function oldEnough(since: number | null, now: number): boolean {
  return since === null || now - since >= WINDOW_MINUTES.drop * MINUTE_MS;
}

export interface AlertState {
  kind: AlertKind;
  threshold: number;
  /** When it last fired (Unix ms), or null. */
  firedAt: number | null;
}

/** Whether the alert fires at `now` with `visitors` counted over its window. */
export function fires(alert: AlertState, visitors: number, now: number): boolean {
  if (alert.firedAt !== null && now - alert.firedAt < QUIET_MS) return false;
  return alert.kind === "spike" ? visitors >= alert.threshold : visitors < alert.threshold;
}

/** The webhook's data of a firing (CONTRACT "Webhooks": traffic.spike, traffic.drop). */
export function alertData(
  { siteId, kind, visitors, threshold }: {
    siteId: string;
    kind: AlertKind;
    visitors: number;
    threshold: number;
  },
): string {
  return JSON.stringify({ siteId, kind, visitors, threshold, window: WINDOW_MINUTES[kind] });
}
