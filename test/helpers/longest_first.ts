/**
 * The order a run starts its files in: within each project, the longest
 * first, so that the run does not end with one worker still busy on a long
 * file while the others wait.
 *
 * Vitest orders by the durations it cached from this checkout's last run, and
 * a checkout that never ran (a fresh clone, CI) by file size, which put
 * twenty-second files of a few lines last. So a file's duration comes from
 * vitest's cache when it has one, else from test/durations.json (the
 * durations reporter's output of a recent run, committed), else it counts
 * as short. Refresh that file with
 * `CRM_TEST_DURATIONS=test/durations.json deno task test`; a stale one only
 * costs time.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { durationKey, type FileDuration } from "./durations.ts";

const RECORDED = new URL("../durations.json", import.meta.url);

/** Recorded durations by file (relative to the root) and project. */
export function recordedDurations(files: FileDuration[]): Map<string, number> {
  return new Map(files.map((f) => [durationKey(f), f.ms]));
}

function readRecorded(): Map<string, number> {
  try {
    return recordedDurations(JSON.parse(Deno.readTextFileSync(RECORDED)));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return new Map();
    throw error;
  }
}

/** Where a file runs and how long it took, for its place in the order. */
export interface Placed {
  /** vitest's `sequence.groupOrder` of the file's project. */
  groupOrder: number;
  project: string;
  ms: number;
}

/** Projects one after another, as vitest runs them; within one, the longest first. */
export function longestFirst<T>(items: T[], placed: (item: T) => Placed): T[] {
  const places = new Map(items.map((item) => [item, placed(item)]));
  return [...items].sort((x, y) => {
    const a = places.get(x)!;
    const b = places.get(y)!;
    if (a.groupOrder !== b.groupOrder) return a.groupOrder - b.groupOrder;
    if (a.project !== b.project) return a.project < b.project ? -1 : 1;
    return b.ms - a.ms;
  });
}

export default class LongestFirst extends BaseSequencer {
  #recorded = readRecorded();

  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root.replace(/\/$/, "") + "/";
    const cache = this.ctx.cache;
    const durationOf = (spec: TestSpecification): number => {
      const cached = cache.getTestSpecificationResult(spec);
      if (cached) return cached.duration;
      const file = spec.moduleId.startsWith(root)
        ? spec.moduleId.slice(root.length)
        : spec.moduleId;
      return this.#recorded.get(durationKey({ project: spec.project.name, file })) ?? 0;
    };
    return Promise.resolve(longestFirst(files, (spec) => ({
      groupOrder: spec.project.config.sequence.groupOrder,
      project: spec.project.name,
      ms: durationOf(spec),
    })));
  }
}
