import { describe, expect, it } from 'vitest';
import { BEFORE, buildBeforeRows, renderBeforeTable } from '../../bench/lib/report-before.js';
import type { LoadResult } from '../../bench/lib/stats.js';

/** A load result with the three figures the table reads; the rest fixed. */
const load = (throughput: number, p50: number, serverCpuMs: number): LoadResult => ({
  inFlight: 50,
  throughput,
  errors: 0,
  elapsedMs: 1000,
  serverCpuMs,
  n: 100,
  p50,
  p99: p50,
  max: p50,
  mean: p50,
});

describe('bench: the before/after table (scripts/bench --before REF)', () => {
  it("puts the earlier commit's figures beside this checkout's, each with its ratio to the anchor", () => {
    const rows = buildBeforeRows({
      aLean: { [BEFORE]: load(100, 8, 10), taskgate: load(120, 6, 8), anchor: load(130, 7, 5) },
      b: { '50': { [BEFORE]: load(280, 160, 3), taskgate: load(320, 150, 2), anchor: load(300, 150, 2.5) } },
      bLean: { '50': { taskgate: load(560, 80, 2) } },
    });
    // a: p50 and CPU (lean only: the SDK row has no earlier figure); b at 50: three figures (SDK only, likewise).
    expect(rows.map((row) => `${row.metric} ${row.client}`)).toEqual([
      'a. 1 in flight: create→result p50 (ms) lean',
      'a. 1 in flight: CPU per task: servers, workers, Redis (ms) lean',
      'b. 50 in flight: throughput (tasks/s) SDK',
      'b. 50 in flight: create→result p50 (ms) SDK',
      'b. 50 in flight: CPU per task: servers, workers, Redis (ms) SDK',
    ]);
    const table = renderBeforeTable(rows, 'abc1234', 'def5678');
    const lines = table.split('\n');
    expect(lines[0]).toMatch(/^\| metric +\| client \| before \(abc1234\) \| after \(def5678\) \| after ÷ before \|/);
    expect(lines).toHaveLength(2 + rows.length);
    const cells = (line: string | undefined): string[] => (line ?? '').split('|').map((cell) => cell.trim());
    // b at 50, CPU: 2 after against 3 before and 2.5 for the anchor.
    expect(cells(lines[6]).slice(3, 8)).toEqual(['3.00', '2.00', '0.67×', '1.20×', '0.80×']);
    expect(cells(lines[4]).slice(3, 6)).toEqual(['280.0', '320.0', '1.14×']);
  });

  it('has no rows when no earlier commit ran', () => {
    expect(buildBeforeRows({ aLean: { taskgate: load(1, 1, 1) } })).toEqual([]);
  });
});
