import type { BenchConfig, LoadLevel } from '../lib/config.js';
import { closedLoop, combine, type LoadResult, type LoadSlice, loadSlice } from '../lib/stats.js';
import type { Subject } from '../systems/mcp-subject.js';

/** The anchor's (and the SDK's) default pollInterval: a tasks/result that has to wait sleeps this long. */
export const SDK_POLL_INTERVAL_MS = 1000;

/** Results per subject name. */
export type BySubject = Record<string, LoadResult>;

/** Sessions for `level`, then a warm-up at its concurrency: JIT, connections, scripts loaded, sessions created. */
async function warmUp(subject: Subject, level: LoadLevel, config: BenchConfig): Promise<void> {
  await subject.prepare(Math.ceil(level.inFlight / config.perSession));
  await closedLoop({
    inFlight: level.inFlight,
    total: Math.max(config.warmup, level.inFlight * 2),
    maxMs: 10_000,
    run: (lane) => subject.run(lane),
  });
}

/** What a stretch of `subject` under `level` measures (latency, CPU time of its processes and the client). */
function loadOf(subject: Subject, level: LoadLevel) {
  return {
    ...level,
    run: (lane: number) => subject.run(lane),
    slowMs: SDK_POLL_INTERVAL_MS,
    pids: subject.pids,
    ...(subject.roles !== undefined && { roles: subject.roles }),
  };
}

function line(subject: Subject, result: LoadResult): string {
  return (
    `  ${subject.name.padEnd(9)} in flight ${String(result.inFlight).padStart(3)}: n=${result.n} ` +
    `p50=${result.p50.toFixed(2)} ms p99=${result.p99.toFixed(2)} ms ${result.throughput.toFixed(0)}/s` +
    (result.errors > 0 ? ` errors=${result.errors}` : '') +
    ((result.slowShare ?? 0) > 0 ? ` (${((result.slowShare ?? 0) * 100).toFixed(1)}% ≥ 1 s)` : '')
  );
}

/**
 * a. create → result latency, one in flight, in rounds like b (`measureInRounds`); then the MCP floor (two
 * pings) of each subject that has one.
 */
export async function runLatency(
  subjects: readonly Subject[],
  config: BenchConfig,
): Promise<{ latency: BySubject; floor: BySubject }> {
  const latency = await measureInRounds(subjects, config.latency, config);
  const floor: BySubject = {};
  for (const subject of subjects) {
    const ping = subject.floor?.bind(subject);
    if (ping === undefined) continue;
    floor[subject.name] = await closedLoop({ ...config.latency, maxMs: 10_000, run: ping });
    process.stderr.write(
      `  ${subject.name.padEnd(9)} floor (2 × ping): p50=${(floor[subject.name] as LoadResult).p50.toFixed(2)} ms\n`,
    );
  }
  return { latency, floor };
}

/** b. throughput and latency with many in flight, each load level measured in rounds (`measureInRounds`). */
export async function runThroughput(
  subjects: readonly Subject[],
  config: BenchConfig,
): Promise<Record<string, BySubject>> {
  const results: Record<string, BySubject> = {};
  for (const level of config.loads) {
    const measured = subjects.filter((subject) => level.inFlight <= (subject.maxInFlight ?? Number.POSITIVE_INFINITY));
    results[String(level.inFlight)] = await measureInRounds(measured, level, config);
  }
  return results;
}

/**
 * One load level for every subject: each is warmed up, then measured in `config.rounds` rounds of
 * `total / rounds` operations (`maxMs / rounds` at most), the subjects' order reversed every other round, and
 * its rounds added up: subjects measured one after the other share the machine's drift (a neighbour's load,
 * its caches) instead of one of them getting all of it. A polling subject (`inOneStretch`) runs its whole
 * load in the first round.
 */
async function measureInRounds(
  measured: readonly Subject[],
  level: LoadLevel,
  config: BenchConfig,
): Promise<BySubject> {
  for (const subject of measured) await warmUp(subject, level, config);
  const round: LoadLevel = {
    inFlight: level.inFlight,
    total: Math.ceil(level.total / config.rounds),
    maxMs: Math.ceil(level.maxMs / config.rounds),
  };
  const slices = new Map<Subject, LoadSlice[]>(measured.map((subject) => [subject, []]));
  for (let index = 0; index < config.rounds; index++) {
    for (const subject of index % 2 === 0 ? measured : [...measured].reverse()) {
      if (subject.inOneStretch === true && index > 0) continue;
      const stretch = subject.inOneStretch === true ? level : round;
      slices.get(subject)?.push(await loadSlice(loadOf(subject, stretch)));
    }
  }
  const byName: BySubject = {};
  for (const subject of measured) {
    const result = combine(slices.get(subject) ?? [], loadOf(subject, level));
    byName[subject.name] = result;
    process.stderr.write(`${line(subject, result)}\n`);
  }
  return byName;
}
