/**
 * A vitest reporter that records how long each test file took: it prints the
 * slowest files after every run, writes every file's figures as JSON to
 * CRM_TEST_DURATIONS when that is set (keeping what the file holds of files
 * this run did not run, so one file can hold both commands' runs: the order
 * of helpers/longest_first.ts reads it), and, when CRM_UNIT_FILE_LIMIT_MS is
 * set (`.ci/run` sets 2000), fails the run for each unit-test file whose
 * tests and hooks took longer (durations.ts, `tooSlow`). A unit test has no
 * server to wait for, so a slow one is a test at the wrong level or a slow
 * piece of code.
 *
 * A file's time in the table is all it cost the run: vitest's preparation of
 * its worker, the import of its setup files and of the file itself, and its
 * tests and hooks.
 */
import process from "node:process";
import type { Reporter, TestModule } from "vitest/node";
import { type FileDuration, limitOf, mergeDurations, slowestLines, tooSlow } from "./durations.ts";

function durationOf(module: TestModule, root: string): FileDuration {
  const d = module.diagnostic();
  const file = module.moduleId.startsWith(root + "/")
    ? module.moduleId.slice(root.length + 1)
    : module.moduleId;
  return {
    file,
    project: module.project.name,
    ms: Math.round(d.prepareDuration + d.setupDuration + d.collectDuration + d.duration),
    importMs: Math.round(d.setupDuration + d.collectDuration),
    testsMs: Math.round(d.duration),
    state: module.state(),
  };
}

export default class DurationsReporter implements Reporter {
  #root = Deno.cwd();

  onInit(vitest: { config: { root: string } }): void {
    this.#root = vitest.config.root.replace(/\/$/, "");
  }

  async onTestRunEnd(modules: ReadonlyArray<TestModule>): Promise<void> {
    const files = modules.map((m) => durationOf(m, this.#root)).filter((f) => f.state !== "skipped")
      .sort((a, b) => b.ms - a.ms);
    if (files.length === 0) return;
    console.info(slowestLines(files, 5).join("\n"));
    const out = Deno.env.get("CRM_TEST_DURATIONS");
    if (out) {
      const kept = await Deno.readTextFile(out).then(JSON.parse).catch(() => []);
      const merged = mergeDurations(Array.isArray(kept) ? kept : [], files);
      await Deno.writeTextFile(out, JSON.stringify(merged, null, 2) + "\n");
    }
    const limit = limitOf(Deno.env.get("CRM_UNIT_FILE_LIMIT_MS"));
    if (limit === undefined) return;
    const slow = tooSlow(files, "unit", limit);
    if (slow.length === 0) return;
    console.error(
      `unit-test files whose tests took over ${limit} ms (CRM_UNIT_FILE_LIMIT_MS); make them ` +
        `faster or move them to the level they test:\n` +
        slow.map((f) => `  ${f.file}: ${f.testsMs} ms`).join("\n"),
    );
    process.exitCode = 1;
  }
}
