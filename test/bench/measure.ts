/** Figures the benchmarks share: percentiles of latencies, memory and CPU time read from /proc. */

/** The value at fraction p (0.5: the median) of ascending numbers; NaN when there are none. */
export function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN;
}

/** A memory field (VmRSS, VmHWM) of /proc/PID/status text, in MB. */
export function statusFieldMb(status: string, field: "VmRSS" | "VmHWM"): number {
  return Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024);
}

/** A memory field (VmRSS: resident now, VmHWM: its peak) of a running process, in MB. */
export function memoryMb(pid: number, field: "VmRSS" | "VmHWM"): number {
  return statusFieldMb(Deno.readTextFileSync(`/proc/${pid}/status`), field);
}

/** CPU time (user + system, every thread) the processes have used so far, in µs. */
export function cpuMicros(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) ticks += statTicks(Deno.readTextFileSync(`/proc/${pid}/stat`)).ticks;
  return ticks * 10_000;
}

/**
 * A /proc stat line's name and CPU time: utime and stime, fields 14 and 15
 * of stat(5), in clock ticks (100 a second here). The name, in parentheses,
 * may hold spaces and parentheses itself ("V8 DefaultWorke"), so the fields
 * are counted from its last ")".
 */
export function statTicks(stat: string): { name: string; ticks: number } {
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  return {
    name: stat.slice(stat.indexOf("(") + 1, close),
    ticks: Number(fields[11]) + Number(fields[12]),
  };
}

/** Every thread of a process: its name and CPU ticks so far, by thread id. */
export function threadTicks(pid: number): Map<string, { name: string; ticks: number }> {
  const threads = new Map<string, { name: string; ticks: number }>();
  for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(
        task.name,
        statTicks(Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/stat`)),
      );
    } catch { /* the thread ended */ }
  }
  return threads;
}

/**
 * Each thread's share of one core between two readings `seconds` apart,
 * busiest first, those under 2% left out: "deno 54%, worker-1 25%, ...".
 * A thread that started between the readings counts from zero.
 */
export function threadShares(
  before: Map<string, { name: string; ticks: number }>,
  after: Map<string, { name: string; ticks: number }>,
  seconds: number,
): string {
  return [...after]
    .map(([id, { name, ticks }]) => ({
      name,
      percent: Math.round((ticks - (before.get(id)?.ticks ?? 0)) / seconds),
    }))
    .filter((t) => t.percent >= 2)
    .sort((a, b) => b.percent - a.percent)
    .map((t) => `${t.name} ${t.percent}%`)
    .join(", ");
}
