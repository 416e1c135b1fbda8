/**
 * A site's notifications (manifest `notifications`) as ingest-service
 * stores them: ingest.email_reports and ingest.traffic_alerts. The lists
 * replace the site's; an entry that stays keeps when it was added (the
 * first report it gets is the first due after that) and when its alert last
 * fired (at most once per 12 hours, whatever imports come between).
 */
import type { Queryable } from "../../lib/db/mod.ts";
import type {
  EmailReportDef,
  NotificationsDef,
  TrafficAlertDef,
} from "../../lib/manifest/types.ts";

const iso = (ms: number) => new Date(ms).toISOString();

/** Makes the site's stored notifications the manifest's; answers the counts of what changed. */
export async function syncNotifications(
  tx: Queryable,
  { siteId, notifications, now }: { siteId: string; notifications: NotificationsDef; now: number },
): Promise<Record<string, number>> {
  const changes: Record<string, number> = {};
  const count = (what: string, n = 1) => {
    if (n > 0) changes[what] = (changes[what] ?? 0) + n;
  };
  const reports = await tx.query<{ recipient: string; every: string; position: number }>(
    `select recipient, every, position from ingest.email_reports where site_id = $1 for update`,
    [siteId],
  );
  const reportKey = (r: { recipient?: string; to?: string; every: string }) =>
    JSON.stringify([r.recipient ?? r.to, r.every]);
  const wantedReports = new Map(
    notifications.emailReports.map((r, position) => [reportKey(r), { ...r, position }]),
  );
  const storedReports = new Map(reports.map((r) => [reportKey(r), r.position]));
  for (const r of reports) {
    if (wantedReports.has(reportKey(r))) continue;
    await tx.query(
      "delete from ingest.email_reports where site_id = $1 and recipient = $2 and every = $3",
      [siteId, r.recipient, r.every],
    );
    count("emailReportsRemoved");
  }
  for (const [key, r] of wantedReports) {
    const position = storedReports.get(key);
    if (position === r.position) continue;
    await tx.query(
      `insert into ingest.email_reports (site_id, recipient, every, position, added_at)
       values ($1, $2, $3, $4, $5)
       on conflict (site_id, recipient, every) do update set position = excluded.position`,
      [siteId, r.to, r.every, r.position, iso(now)],
    );
    count(position === undefined ? "emailReportsAdded" : "emailReportsMoved");
  }

  const alerts = await tx.query<
    { recipient: string; kind: string; threshold: number; position: number }
  >(
    `select recipient, kind, threshold, position from ingest.traffic_alerts
      where site_id = $1 for update`,
    [siteId],
  );
  const alertKey = (a: { recipient?: string; to?: string; kind: string; threshold: number }) =>
    JSON.stringify([a.recipient ?? a.to, a.kind, a.threshold]);
  const wantedAlerts = new Map(
    notifications.trafficAlerts.map((a, position) => [alertKey(a), { ...a, position }]),
  );
  const storedAlerts = new Map(alerts.map((a) => [alertKey(a), a.position]));
  for (const a of alerts) {
    if (wantedAlerts.has(alertKey(a))) continue;
    await tx.query(
      `delete from ingest.traffic_alerts
        where site_id = $1 and recipient = $2 and kind = $3 and threshold = $4`,
      [siteId, a.recipient, a.kind, a.threshold],
    );
    count("trafficAlertsRemoved");
  }
  for (const [key, a] of wantedAlerts) {
    const position = storedAlerts.get(key);
    if (position === a.position) continue;
    await tx.query(
      `insert into ingest.traffic_alerts (site_id, recipient, kind, threshold, position)
       values ($1, $2, $3, $4, $5)
       on conflict (site_id, recipient, kind, threshold) do update set position = excluded.position`,
      [siteId, a.to, a.kind, a.threshold, a.position],
    );
    count(position === undefined ? "trafficAlertsAdded" : "trafficAlertsMoved");
  }
  return changes;
}

/** The site's notifications as export-site prints them; undefined when it has none. */
export async function exportNotifications(
  q: Queryable,
  siteId: string,
): Promise<NotificationsDef | undefined> {
  const reports = await q.query<{ recipient: string; every: EmailReportDef["every"] }>(
    "select recipient, every from ingest.email_reports where site_id = $1 order by position",
    [siteId],
  );
  const alerts = await q.query<
    { recipient: string; kind: TrafficAlertDef["kind"]; threshold: number }
  >(
    `select recipient, kind, threshold from ingest.traffic_alerts
      where site_id = $1 order by position`,
    [siteId],
  );
  if (reports.length === 0 && alerts.length === 0) return undefined;
  return {
    emailReports: reports.map((r) => ({ to: r.recipient, every: r.every })),
    trafficAlerts: alerts.map((a) => ({ to: a.recipient, kind: a.kind, threshold: a.threshold })),
  };
}
