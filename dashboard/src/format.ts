/** How the dashboard shows a metric, and its tables as CSV: plain functions, tested beside. */

export type Metric = number | Record<string, number>;
export type Row = string[];

/** Revenue as `25.98 EUR`, per currency; percentages with %, durations as m:ss. */
export function formatMetric(name: string, value: Metric | undefined): string {
  if (value === undefined) return "";
  if (typeof value === "object") {
    const parts = Object.entries(value).map(([currency, minor]) =>
      `${(minor / 100).toFixed(2)} ${currency}`
    );
    return parts.length ? parts.join(", ") : "0";
  }
  if (name === "bounce_rate" || name === "conversion_rate") return `${value.toFixed(1)}%`;
  if (name === "visit_duration") {
    return `${Math.floor(value / 60)}:${String(Math.round(value % 60)).padStart(2, "0")}`;
  }
  return String(value);
}

/** RFC 4180 CSV; a cell starting with = + - @ is quoted with a ' so a spreadsheet never runs it. */
export function csvOf(headers: string[], rows: Row[]): string {
  const cell = (value: string) => {
    const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
    return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  return [headers, ...rows].map((row) => row.map(cell).join(",")).join("\r\n") + "\r\n";
}
