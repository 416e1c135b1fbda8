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
  for (const pid of pids) {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 a second here).
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10_000;
}
