import { describe, expect, it } from 'vitest';
import { combine, type LoadSlice, loadSlice } from '../../bench/lib/stats.js';

const slice = (samples: number[], elapsedMs: number, cpu: number, roleCpu: number[]): LoadSlice => ({
  samples,
  errors: 0,
  elapsedMs,
  serverCpu: cpu,
  clientCpu: cpu / 2,
  roleCpu,
});

describe('the rounds of a load level add up', () => {
  it('takes latency over every sample, throughput over the summed wall time, CPU per task over all tasks', () => {
    const rounds = [slice([1, 2, 3, 4], 100, 8, [6, 2]), slice([5, 6, 1200, 8], 300, 24, [20, 4])];
    const result = combine(rounds, {
      inFlight: 4,
      slowMs: 1000,
      pids: [1, 2],
      roles: { gateway: [1], worker: [2] },
    });
    expect(result.n).toBe(8);
    expect(result.p50).toBe(4);
    expect(result.max).toBe(1200);
    // 8 tasks in 400 ms of load.
    expect(result.throughput).toBe(20);
    expect(result.elapsedMs).toBe(400);
    expect(result.serverCpuMs).toBe(4);
    expect(result.clientCpuMs).toBe(2);
    expect(result.roleCpuMs).toEqual({ gateway: 26 / 8, worker: 6 / 8 });
    expect(result.slowShare).toBe(1 / 8);
  });

  it('has no CPU figures where no process was watched, and counts the errors of every round', () => {
    const rounds = [
      { ...slice([1], 10, 0, []), errors: 2 },
      { ...slice([2], 10, 0, []), errors: 1 },
    ];
    const result = combine(rounds, { inFlight: 1 });
    expect(result.errors).toBe(3);
    expect(result.serverCpuMs).toBeUndefined();
    expect(result.roleCpuMs).toBeUndefined();
    expect(result.throughput).toBe(100);
  });

  it('runs a stretch of closed-loop load to its count, each lane one operation at a time', async () => {
    const busy = new Set<number>();
    let overlap = false;
    const stretch = await loadSlice({
      inFlight: 3,
      total: 10,
      maxMs: 10_000,
      run: async (lane) => {
        if (busy.has(lane)) overlap = true;
        busy.add(lane);
        await new Promise((resolve) => setTimeout(resolve, 1));
        busy.delete(lane);
        if (lane === 2) throw new Error('refused');
      },
    });
    expect(overlap).toBe(false);
    expect(stretch.samples.length + stretch.errors).toBe(10);
    expect(stretch.errors).toBeGreaterThan(0);
    expect(stretch.roleCpu).toEqual([]);
  });
});
