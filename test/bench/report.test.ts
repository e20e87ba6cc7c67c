import { describe, expect, it } from 'vitest';
import { buildRows } from '../../bench/lib/report.js';
import type { LoadResult } from '../../bench/lib/stats.js';

/** A one-in-flight load result with the p50 the a rows read; the rest fixed. */
const load = (p50: number): LoadResult => ({
  inFlight: 1,
  throughput: 1000 / p50,
  errors: 0,
  elapsedMs: 1000,
  serverCpuMs: 1,
  n: 100,
  p50,
  p99: p50,
  max: p50,
  mean: p50,
});

const leanP50 = (rows: ReturnType<typeof buildRows>) =>
  rows.find((row) => row.client === 'lean' && row.metric === 'a. 1 in flight: create→result p50 (ms)');

describe('bench: the p50 target of a (≤ 3× raw BullMQ, lean client)', () => {
  it("judges the lean p50 against raw BullMQ measured in the lean client's own rounds", () => {
    // BullMQ took 2 ms in the SDK client's rounds and 1 ms in the lean client's: 2.5 ms is 2.5× the latter.
    const row = leanP50(
      buildRows({ a: { taskgate: load(5), bullmq: load(2) }, aLean: { taskgate: load(2.5), bullmq: load(1) } }),
    );
    expect(row).toMatchObject({ taskgate: 2.5, bullmq: 1, verdict: 'PASS' });
    const slower = leanP50(
      buildRows({ a: { taskgate: load(5), bullmq: load(2) }, aLean: { taskgate: load(3.5), bullmq: load(1) } }),
    );
    expect(slower).toMatchObject({ taskgate: 3.5, bullmq: 1, verdict: 'MISS' });
  });

  it("falls back to the SDK client's BullMQ figure when the lean rounds had none (an older result file)", () => {
    const row = leanP50(buildRows({ a: { taskgate: load(5), bullmq: load(2) }, aLean: { taskgate: load(3.5) } }));
    expect(row).toMatchObject({ taskgate: 3.5, bullmq: 2, verdict: 'PASS' });
  });
});
