/** How long test files took, and which of them are over a limit (durations_reporter.ts). */

export interface FileDuration {
  /** The file's path from the repository's root. */
  file: string;
  /** The vitest project that ran it (unit, integration, system, ...). */
  project: string;
  /** All it cost the run: preparation, imports, tests and hooks. */
  ms: number;
  /** The import of its setup files and of itself (with its suites' bodies). */
  importMs: number;
  /** Its tests and hooks. */
  testsMs: number;
  state: string;
}

/** What tells a file's figures apart: a file runs in several projects. */
export const durationKey = (f: { project: string; file: string }) => `${f.project}:${f.file}`;

/** A run's figures over earlier ones: a file's new figures replace its old; the slowest first. */
export function mergeDurations(earlier: FileDuration[], run: FileDuration[]): FileDuration[] {
  const ran = new Set(run.map(durationKey));
  return [...earlier.filter((f) => !ran.has(durationKey(f))), ...run].sort((a, b) => b.ms - a.ms);
}

/** A limit in milliseconds from a setting; undefined when unset or empty. */
export function limitOf(setting: string | undefined): number | undefined {
  if (setting === undefined || setting.trim() === "") return undefined;
  const limit = Number(setting);
  if (!Number.isFinite(limit) || limit <= 0) {
    throw new Error(`CRM_UNIT_FILE_LIMIT_MS must be a positive number of milliseconds: ${setting}`);
  }
  return limit;
}

/**
 * The files of one project whose tests and hooks took longer than the limit,
 * slowest first. Their import is left out: it is mostly vitest transforming
 * modules it shares between files, which depends on its cache and on what
 * else the machine is doing more than on the file.
 */
export function tooSlow(files: FileDuration[], project: string, limitMs: number): FileDuration[] {
  return files.filter((f) => f.project === project && f.testsMs > limitMs)
    .sort((a, b) => b.testsMs - a.testsMs);
}

const seconds = (ms: number) => (ms / 1000).toFixed(1).padStart(6) + " s";

/** The n slowest files as lines of a table: time, its import and tests, project, file. */
export function slowestLines(files: FileDuration[], n: number): string[] {
  const slowest = [...files].sort((a, b) => b.ms - a.ms).slice(0, n);
  return [
    `slowest ${slowest.length} of ${files.length} test files (all / import / tests):`,
    ...slowest.map((f) =>
      `${seconds(f.ms)} ${seconds(f.importMs)} ${seconds(f.testsMs)}  ${
        f.project.padEnd(11)
      } ${f.file}`
    ),
  ];
}
