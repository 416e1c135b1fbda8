import { describe, expect, it } from "vitest";
import { readWrkOutput } from "./wrk.ts";

// wrk 4.1's output for a run with --latency, a script's non-2xx answers and socket errors.
const OUTPUT = `Running 15s test @ http://127.0.0.1:40123
  1 threads and 256 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    21.37ms    6.02ms  98.10ms   81.02%
    Req/Sec    12.01k   512.33    13.10k    70.00%
  Latency Distribution
     50%   20.51ms
     75%   23.80ms
     90%   28.44ms
     99%  850.00us
  180312 requests in 15.02s, 31.12MB read
  Socket errors: connect 0, read 2, write 1, timeout 4
  Non-2xx or 3xx responses: 17
Requests/sec:  12004.79
Transfer/sec:      2.07MB
`;

describe("wrk output", () => {
  it("reads throughput, answers, duration, percentiles in their units, and failures", () => {
    const r = readWrkOutput(OUTPUT);
    expect(r.rps).toBe(12004.79);
    expect(r.requests).toBe(180312);
    expect(r.seconds).toBeCloseTo(15.02, 5);
    expect(r.p50Ms).toBeCloseTo(20.51, 5);
    expect(r.p99Ms).toBeCloseTo(0.85, 5);
    expect(r.non2xx).toBe(17);
    expect(r.socketErrors).toBe(7);
    expect(r.errors).toBe(24);
  });

  it("refuses output it cannot read", () => {
    expect(() => readWrkOutput("unable to connect to 127.0.0.1:1 Connection refused")).toThrow(
      /cannot read wrk's output/,
    );
  });
});
