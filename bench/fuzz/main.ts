/**
 * The fuzz's bench mode (`bash scripts/bench --fuzz [--fuzz-runs N] [--concurrency C] [--seed S]
 * [--fuzz-minutes M]`): the generators and oracle of test/fuzz/http-surface.test.ts, N cases (default
 * 1,000,000) spread over C concurrent runs (seeds S, S+1, ...), against the same deployment; with M, it stops
 * generating after M minutes and reports the cases it ran. Prints progress, then one line of figures,
 * and writes them as JSON under bench/results/; exits 1 when a case or a check after the run fails.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildWorld, fuzzAgent, fuzzRun } from './driver.js';
import { type MemorySample, startFuzzTarget } from './target.js';

const { values } = parseArgs({
  options: {
    fuzz: { type: 'boolean' },
    'fuzz-runs': { type: 'string' },
    concurrency: { type: 'string' },
    seed: { type: 'string' },
    'fuzz-minutes': { type: 'string' },
    out: { type: 'string' },
  },
});
const positive = (name: string, raw: string | undefined, fallback: number): number => {
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer, got '${raw}'`);
  return value;
};
const runs = positive('fuzz-runs', values['fuzz-runs'], 1_000_000);
const concurrency = positive('concurrency', values.concurrency, 4);
const minutes = values['fuzz-minutes'] === undefined ? undefined : positive('fuzz-minutes', values['fuzz-minutes'], 1);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
const outDir = values.out ?? new URL('../results/', import.meta.url).pathname;

const target = await startFuzzTarget('fuzz-bench');
// Interrupted: stop what was started (by pid) before leaving.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void target.stop().finally(() => process.exit(130));
  });
}
const agent = fuzzAgent(concurrency);
let cases = 0;
let failure: unknown;
const started = Date.now();
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
const settled = async (): Promise<MemorySample> => {
  let lowest: MemorySample | undefined;
  for (let sample = 0; sample < 4; sample++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const memory = await target.memory();
    if (lowest === undefined || memory.heapUsed < lowest.heapUsed) lowest = memory;
  }
  return lowest as MemorySample;
};
const progress = setInterval(() => {
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(`fuzz: ${cases} cases, ${(cases / seconds).toFixed(0)}/s\n`);
}, 10_000);
try {
  const world = await buildWorld(target.url, agent);
  await fuzzRun({ url: target.url, world, agent, numRuns: 500, seed: 1 });
  const baseline = await settled();
  process.stdout.write(`fuzz: seed ${seed}, ${runs} cases, ${concurrency} at a time\n`);
  const share = (index: number): number => Math.floor(runs / concurrency) + (index < runs % concurrency ? 1 : 0);
  await Promise.all(
    Array.from({ length: concurrency }, (_unused, index) =>
      fuzzRun({
        url: target.url,
        world,
        agent,
        numRuns: share(index),
        seed: seed + index,
        ...(minutes !== undefined && { timeLimitMs: minutes * 60_000 }),
        onCase: () => cases++,
      }),
    ),
  ).catch((error: unknown) => {
    failure = error;
  });
  clearInterval(progress);
  const seconds = (Date.now() - started) / 1000;
  const after = await settled();
  const logged = target.gateway.output().match(/"level":(50|60)/g)?.length ?? 0;
  const heapOk = after.heapUsed <= baseline.heapUsed * 1.2 + 4 * 2 ** 20;
  const result = {
    seed,
    concurrency,
    cases,
    requested: runs,
    minutes: minutes ?? null,
    seconds: Math.round(seconds),
    casesPerSecond: Math.round(cases / seconds),
    alive: target.alive(),
    errorsLogged: logged,
    heapMiB: { baseline: mib(baseline.heapUsed), after: mib(after.heapUsed) },
    rssMiB: { baseline: mib(baseline.rss), after: mib(after.rss) },
    heapBackToBaseline: heapOk,
    failure: failure === undefined ? null : String((failure as Error).message ?? failure),
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(`${outDir}/fuzz-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, `${JSON.stringify(result)}\n`);
  if (failure !== undefined || !result.alive || logged > 0 || !heapOk) process.exitCode = 1;
} finally {
  clearInterval(progress);
  agent.destroy();
  await target.stop();
}
