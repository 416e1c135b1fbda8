/**
 * A report's numbers, read as reports queries (the bodies POST
 * /stats/v1/query takes) from the same engine that answers the dashboard,
 * so a mail and the dashboard never disagree: one query for the five
 * metrics compared with the period before, one for the top sources, one
 * for the top pages.
 */
import { REPORT_METRICS, type ReportNumbers } from "./report_mail.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Answers a query body as the public route would (its JSON answer). */
export type AnswerQuery = (body: Record<string, Json>) => Promise<Json>;

export interface ReportDays {
  first: Temporal.PlainDate;
  last: Temporal.PlainDate;
  previousFirst: Temporal.PlainDate;
  previousLast: Temporal.PlainDate;
}

const TOP = 5;

interface Row {
  dimensions: (string | null)[];
  metrics: number[];
  comparison?: { change: (number | null)[] } | null;
}

const rowsOf = (answer: Json) => (answer as unknown as { results: Row[] }).results;

export async function reportNumbers(answer: AnswerQuery, days: ReportDays): Promise<ReportNumbers> {
  const range = [days.first.toString(), days.last.toString()];
  const [totals] = rowsOf(
    await answer({
      metrics: [...REPORT_METRICS],
      date_range: range,
      include: { compare: [days.previousFirst.toString(), days.previousLast.toString()] },
    }),
  );
  const sources = rowsOf(
    await answer({
      metrics: ["visitors"],
      date_range: range,
      dimensions: ["visit:source"],
      order_by: [["visitors", "desc"], ["visit:source", "asc"]],
      limit: TOP,
    }),
  );
  // Pages of events alone count no page view; asked for more, so five with views remain.
  const pages = rowsOf(
    await answer({
      metrics: ["pageviews"],
      date_range: range,
      dimensions: ["event:page"],
      order_by: [["pageviews", "desc"], ["event:page", "asc"]],
      limit: TOP * 4,
    }),
  );
  return {
    metrics: REPORT_METRICS.map((metric, i) => ({
      metric,
      value: totals.metrics[i],
      change: totals.comparison?.change[i] ?? null,
    })),
    sources: sources.map((r) => ({ source: r.dimensions[0], visitors: r.metrics[0] })),
    pages: pages
      .filter((r) => r.metrics[0] > 0 && r.dimensions[0] !== null)
      .slice(0, TOP)
      .map((r) => ({ page: r.dimensions[0]!, pageviews: r.metrics[0] })),
  };
}
