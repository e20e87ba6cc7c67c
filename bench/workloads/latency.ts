import type { BenchConfig, LoadLevel } from '../lib/config.js';
import { closedLoop, type LoadResult } from '../lib/stats.js';
import type { Subject } from '../systems/mcp-subject.js';

/** The anchor's (and the SDK's) default pollInterval: a tasks/result that has to wait sleeps this long. */
export const SDK_POLL_INTERVAL_MS = 1000;

/** Results per subject name. */
export type BySubject = Record<string, LoadResult>;

async function measure(subject: Subject, level: LoadLevel, config: BenchConfig): Promise<LoadResult> {
  await subject.prepare(Math.ceil(level.inFlight / config.perSession));
  // Warm-up at the same concurrency: JIT, connections, scripts loaded, sessions created.
  await closedLoop({
    inFlight: level.inFlight,
    total: Math.max(config.warmup, level.inFlight * 2),
    maxMs: 10_000,
    run: (lane) => subject.run(lane),
  });
  return await closedLoop({
    ...level,
    run: (lane) => subject.run(lane),
    slowMs: SDK_POLL_INTERVAL_MS,
    pids: subject.pids,
    ...(subject.roles !== undefined && { roles: subject.roles }),
  });
}

function line(subject: Subject, result: LoadResult): string {
  return (
    `  ${subject.name.padEnd(9)} in flight ${String(result.inFlight).padStart(3)}: n=${result.n} ` +
    `p50=${result.p50.toFixed(2)} ms p99=${result.p99.toFixed(2)} ms ${result.throughput.toFixed(0)}/s` +
    (result.errors > 0 ? ` errors=${result.errors}` : '') +
    ((result.slowShare ?? 0) > 0 ? ` (${((result.slowShare ?? 0) * 100).toFixed(1)}% ≥ 1 s)` : '')
  );
}

/** a. create → result latency, one in flight, for every subject in turn; and the MCP floor (two pings). */
export async function runLatency(
  subjects: readonly Subject[],
  config: BenchConfig,
): Promise<{ latency: BySubject; floor: BySubject }> {
  const latency: BySubject = {};
  const floor: BySubject = {};
  for (const subject of subjects) {
    latency[subject.name] = await measure(subject, config.latency, config);
    process.stderr.write(`${line(subject, latency[subject.name] as LoadResult)}\n`);
    const ping = subject.floor?.bind(subject);
    if (ping !== undefined) {
      floor[subject.name] = await closedLoop({ ...config.latency, maxMs: 10_000, run: ping });
      process.stderr.write(`    floor (2 × ping): p50=${(floor[subject.name] as LoadResult).p50.toFixed(2)} ms\n`);
    }
  }
  return { latency, floor };
}

/** b. throughput and latency with many in flight, per load level, for every subject in turn. */
export async function runThroughput(
  subjects: readonly Subject[],
  config: BenchConfig,
): Promise<Record<string, BySubject>> {
  const results: Record<string, BySubject> = {};
  for (const level of config.loads) {
    const byName: BySubject = {};
    for (const subject of subjects) {
      if (level.inFlight > (subject.maxInFlight ?? Number.POSITIVE_INFINITY)) continue;
      byName[subject.name] = await measure(subject, level, config);
      process.stderr.write(`${line(subject, byName[subject.name] as LoadResult)}\n`);
    }
    results[String(level.inFlight)] = byName;
  }
  return results;
}
