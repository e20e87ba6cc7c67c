import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWorld, fuzzAgent, fuzzRun } from '../../bench/fuzz/driver.js';
import { type FuzzTarget, type MemorySample, startFuzzTarget } from '../../bench/fuzz/target.js';

// Fuzzing of the HTTP surface (bench/fuzz: the generators and the oracle, shared with `scripts/bench --fuzz`):
// a real gateway process (static tokens), a real worker and Redis; 10,000 generated requests over real HTTP,
// each owed one answer (status, JSON-RPC error code from the catalogue, id). Afterwards the gateway runs, it
// logged no error, and its heap after forced full collections is back near its baseline.

const CASES = 10_000;
let target: FuzzTarget;
const agent = fuzzAgent(1);

beforeAll(async () => {
  target = await startFuzzTarget('fuzz-http');
}, 60_000);

afterAll(async () => {
  agent.destroy();
  await target?.stop();
}, 30_000);

/** The lowest heap of a few samples a moment apart (a straggling stream or timer may hold memory briefly). */
async function settledHeap(): Promise<MemorySample> {
  let lowest: MemorySample | undefined;
  for (let sample = 0; sample < 4; sample++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const memory = await target.memory();
    if (lowest === undefined || memory.heapUsed < lowest.heapUsed) lowest = memory;
  }
  return lowest as MemorySample;
}

describe('the HTTP surface under fuzzing', () => {
  it(`answers ${CASES} generated requests as owed, keeps running, logs no error and returns to its memory baseline`, async () => {
    const world = await buildWorld(target.url, agent);
    // Warm-up (code compiled, pools and caches filled) before the baseline.
    await fuzzRun({ url: target.url, world, agent, numRuns: 500, seed: 1 });
    const baseline = await settledHeap();
    let cases = 0;
    await fuzzRun({ url: target.url, world, agent, numRuns: CASES, onCase: () => cases++ });
    const after = await settledHeap();

    expect(cases).toBe(CASES);
    expect(target.alive()).toBe(true);
    expect(target.gateway.output()).not.toMatch(/"level":(50|60)/);
    // Heap after two full GCs: within 20% (plus 4 MiB of slack) of the baseline.
    expect(after.heapUsed).toBeLessThanOrEqual(baseline.heapUsed * 1.2 + 4 * 1024 * 1024);
  }, 120_000);
});
