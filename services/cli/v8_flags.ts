/**
 * V8's flags for every process of the system: `deno task start`, `deno task
 * service`, the container's entry point, and the relaunch with the OTLP
 * exporter on (otel_runtime.ts), which must pass them again since a
 * process's own flags are not in Deno.args.
 *
 * Each isolate's young generation may grow to V8's default semi-space size
 * under a steady stream of requests, and that memory stays resident. At 8
 * MB a semi-space, `deno task start` peaked 20 to 70 MB lower during the
 * content benchmark, with no loss of throughput the benchmark could show
 * (docs/benchmarks.md, "V8's young generation capped at 8 MB a
 * semi-space").
 */
export const V8_FLAGS_ARG = "--v8-flags=--max-semi-space-size=8";
