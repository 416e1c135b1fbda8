/** Figures the benchmarks share: percentiles of latencies and memory read from /proc. */

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
