/**
 * `deno task bench compare OLD.json NEW.json`: the change of every figure
 * between two result files of `deno task bench`, so a change's effect on
 * speed and memory can be shown in its review.
 *
 * Reports are matched by name and rows by their label (the row's first text
 * column: `target`, `path`, `run`); each numeric column present in both is
 * compared. Percent texts ("61%") count as numbers. Rows or reports present
 * on one side only are listed as added or removed, never guessed.
 */
import type { BenchReport, BenchRow } from "./main.ts";

export interface BenchFile {
  at?: string;
  reports: BenchReport[];
}

export interface FigureChange {
  report: string;
  row: string;
  figure: string;
  old: number;
  new: number;
  /** (new − old) / old in percent; null when old is 0. */
  changePct: number | null;
}

export interface Comparison {
  changes: FigureChange[];
  /** "report / row" present only in the new file. */
  added: string[];
  /** "report / row" present only in the old file. */
  removed: string[];
}

/** The row's label: its first text column that is not a number or percent. */
export function rowLabel(row: BenchRow): string {
  for (const value of Object.values(row)) {
    if (typeof value === "string" && numberOf(value) === undefined) return value;
  }
  return "";
}

/** A figure as a number: numbers as they are, "61%" as 61, anything else undefined. */
export function numberOf(value: BenchRow[string]): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "string") {
    const match = /^\s*(-?\d+(?:\.\d+)?)\s*%\s*$/.exec(value);
    if (match) return Number(match[1]);
  }
  return undefined;
}

function rowsByLabel(report: BenchReport): Map<string, BenchRow> {
  const out = new Map<string, BenchRow>();
  const seen = new Map<string, number>();
  for (const row of report.rows) {
    const label = rowLabel(row);
    // Two rows with one label (a repeated run) are told apart by their order.
    const n = (seen.get(label) ?? 0) + 1;
    seen.set(label, n);
    out.set(n === 1 ? label : `${label} #${n}`, row);
  }
  return out;
}

export function compare(oldFile: BenchFile, newFile: BenchFile): Comparison {
  const result: Comparison = { changes: [], added: [], removed: [] };
  const oldReports = new Map(oldFile.reports.map((r) => [r.name, r]));
  const newReports = new Map(newFile.reports.map((r) => [r.name, r]));
  for (const [name, oldReport] of oldReports) {
    const newReport = newReports.get(name);
    if (!newReport) {
      result.removed.push(name);
      continue;
    }
    const oldRows = rowsByLabel(oldReport);
    const newRows = rowsByLabel(newReport);
    for (const [label, oldRow] of oldRows) {
      const newRow = newRows.get(label);
      if (!newRow) {
        result.removed.push(`${name} / ${label}`);
        continue;
      }
      for (const [figure, oldValue] of Object.entries(oldRow)) {
        const before = numberOf(oldValue);
        const after = numberOf(newRow[figure]);
        if (before === undefined || after === undefined) continue;
        result.changes.push({
          report: name,
          row: label,
          figure,
          old: before,
          new: after,
          changePct: before === 0 ? null : ((after - before) / before) * 100,
        });
      }
    }
    for (const label of newRows.keys()) {
      if (!oldRows.has(label)) result.added.push(`${name} / ${label}`);
    }
  }
  for (const name of newReports.keys()) {
    if (!oldReports.has(name)) result.added.push(name);
  }
  return result;
}

const signed = (n: number, digits: number) => `${n > 0 ? "+" : ""}${n.toFixed(digits)}`;

/** The comparison as text lines: one per figure, then what was added or removed. */
export function formatComparison(comparison: Comparison): string[] {
  const lines: string[] = [];
  let current = "";
  for (const c of comparison.changes) {
    const heading = `${c.report} / ${c.row}`;
    if (heading !== current) {
      lines.push(`\n${heading}`);
      current = heading;
    }
    const change = c.changePct === null
      ? (c.new === c.old ? "0%" : "n/a (was 0)")
      : `${signed(c.changePct, 1)}%`;
    lines.push(`  ${c.figure}: ${c.old} → ${c.new} (${change})`);
  }
  for (const a of comparison.added) lines.push(`added: ${a}`);
  for (const r of comparison.removed) lines.push(`removed: ${r}`);
  return lines;
}

export async function main(args: string[]): Promise<number> {
  if (args.length !== 2) {
    console.error("usage: deno task bench compare OLD.json NEW.json");
    return 2;
  }
  const [oldFile, newFile] = await Promise.all(
    args.map(async (path) => JSON.parse(await Deno.readTextFile(path)) as BenchFile),
  );
  console.log(`old: ${args[0]}${oldFile.at ? ` (${oldFile.at})` : ""}`);
  console.log(`new: ${args[1]}${newFile.at ? ` (${newFile.at})` : ""}`);
  for (const line of formatComparison(compare(oldFile, newFile))) console.log(line);
  return 0;
}
