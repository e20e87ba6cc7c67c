/**
 * Runs the MCP conformance suites (@modelcontextprotocol/conformance, server scenarios) against taskgate as
 * it is deployed: a private redis-server, TWO gateway processes and one worker process serving the
 * conformance fixture, all started with the `taskgate` CLI from the workspace sources, behind a round-robin
 * proxy without stickiness. One deployment serves every leg:
 *
 *   0.1.16       suite 0.1.16, `--suite all` (revision 2025-11-25, sessions)
 *   2025-11-25   suite 0.2.0-alpha.12, `--suite all --spec-version 2025-11-25` (sessions)
 *   2026-07-28   suite 0.2.0-alpha.12, `--suite all --spec-version 2026-07-28` (stateless)
 *   tasks        suite 0.2.0-alpha.12, the ten `tasks-*` scenarios of the tasks extension, by name, `--force`
 *
 * Exits 0 when every scenario of every leg passes or fails as that leg's expected-failures file says
 * (`expected-failures.yml` for 0.1.16, `expected-failures-<leg>.yml` for the others).
 *
 *   node --conditions=taskgate-source --import tsx test/conformance/run.ts [--leg <leg>] [--scenario <name>] [--verbose]
 *
 * With `--url <mcp endpoint>` it starts nothing and runs the legs against that endpoint. The suites need
 * Node 22: they run on the `node` npm package of this folder, installed with `npm ci` here when missing (this
 * folder is its own npm project, not a workspace).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type ForkedProcess, forkNode, startRedis, startRoundRobinProxy } from '@taskgate/test-harness';
import { forkGateway, waitForOutput } from '../gateway/fixtures/processes.js';
import { LEGS, type Leg, legRuns } from './legs.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = `${root}packages/cli/src/run.ts`;
const node22 = `${here}node_modules/.bin/node`;
const suites = {
  '0.1.16': `${here}node_modules/@modelcontextprotocol/conformance/dist/index.js`,
  '0.2.0-alpha.12': `${here}node_modules/conformance-2026/dist/index.js`,
} as const;

const { values } = parseArgs({
  options: {
    leg: { type: 'string', multiple: true },
    scenario: { type: 'string' },
    url: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});
const legs = (values.leg ?? [...LEGS]) as Leg[];
for (const leg of legs) if (!LEGS.includes(leg)) throw new Error(`--leg must be one of ${LEGS.join(', ')}: ${leg}`);

/** `npm ci` in this folder unless its node_modules match its lockfile (as `npm ci` left them). */
function ensureSuiteInstalled(): void {
  const stamp = `${here}node_modules/.package-lock.json`;
  const fresh =
    Object.values(suites).every((suite) => existsSync(suite)) &&
    existsSync(node22) &&
    existsSync(stamp) &&
    statSync(stamp).mtimeMs >= statSync(`${here}package-lock.json`).mtimeMs;
  if (fresh && process.env.CI === undefined) return;
  console.log('conformance: installing the suites and Node 22 (npm ci in test/conformance)');
  const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: here, stdio: 'inherit' });
  if (install.status !== 0) throw new Error('npm ci in test/conformance failed');
}

/**
 * The checks that did not pass in a suite's results directory (`-o`: a folder per scenario with its
 * `checks.json`), one line each with its scenario, id and message: what a failed run prints, so a failure
 * in CI says which check it was without `--verbose`.
 */
function failedChecks(dir: string): string[] {
  const lines: string[] = [];
  for (const scenario of readdirSync(dir)) {
    const file = join(dir, scenario, 'checks.json');
    if (!existsSync(file)) continue;
    const checks = JSON.parse(readFileSync(file, 'utf8')) as { id: string; status: string; errorMessage?: string }[];
    for (const check of checks) {
      if (check.status !== 'FAILURE') continue;
      const name = scenario.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
      lines.push(`  ${name}: ${check.id}: ${check.errorMessage ?? '(no message)'}`);
    }
  }
  return lines;
}

async function runSuite(suite: string, args: readonly string[]): Promise<number> {
  const results = mkdtempSync(join(tmpdir(), 'taskgate-conformance-'));
  const all = [suite, 'server', ...args, '-o', results, ...(values.verbose === true ? ['--verbose'] : [])];
  const child = spawn(node22, all, { cwd: here, stdio: 'inherit' });
  const code = await new Promise<number>((resolve) =>
    child.once('exit', (exit, signal) => resolve(exit ?? (signal === null ? 1 : 128))),
  );
  if (code !== 0) {
    const failed = failedChecks(results);
    if (failed.length > 0) console.log(`conformance: the checks that failed:\n${failed.join('\n')}`);
  }
  rmSync(results, { recursive: true, force: true });
  return code;
}

/** Every run of the chosen legs against `url`, one after the other; the worst exit code. */
async function runLegs(url: string): Promise<number> {
  let worst = 0;
  for (const run of legRuns(legs, here, values.scenario)) {
    console.log(`\nconformance: leg ${run.leg}: ${run.args.join(' ')}`);
    const code = await runSuite(suites[run.suite], ['--url', url, ...run.args]);
    console.log(`conformance: leg ${run.leg} ${run.label} exited with ${code}`);
    worst = Math.max(worst, code);
  }
  return worst;
}

ensureSuiteInstalled();
// `--url`: the suites against a deployment someone else started (test/deploy/chart-processes.test.ts).
if (values.url !== undefined) process.exit(await runLegs(values.url));
const redis = await startRedis();
const processes: ForkedProcess[] = [];
let proxy: Awaited<ReturnType<typeof startRoundRobinProxy>> | undefined;
let code = 1;
try {
  const env = {
    REDIS_URL: redis.url,
    TASKGATE_KEY_PREFIX: 'conformance',
    TASKGATE_CURSOR_SECRET: 'conformance-cursor-secret-0123456789',
    TASKGATE_REQUEST_STATE_SECRET: 'conformance-request-state-secret-0123',
    // No metrics listener: its default port may be taken by another deployment on this machine.
    TASKGATE_METRICS_PORT: '0',
  };
  const worker = forkNode(cli, ['worker', '--tools', '@taskgate/conformance-fixture'], env, { cwd: root });
  processes.push(worker);
  const gateways = await Promise.all([forkGateway(env), forkGateway(env)]);
  processes.push(...gateways.map((gateway) => gateway.proc));
  await waitForOutput(worker, /worker ready/, 60_000);
  const urls = gateways.map((gateway) => gateway.url);
  proxy = await startRoundRobinProxy(urls.map((url) => new URL(url).origin));
  console.log(`conformance: 2 gateways (${urls.join(', ')}) and a worker behind ${proxy.origin}`);
  code = await runLegs(`${proxy.origin}/mcp`);
  const spread = new Set(proxy.log.map((entry) => entry.target));
  console.log(`conformance: the proxy sent ${proxy.log.length} requests to ${spread.size} gateway(s)`);
} catch (error) {
  console.error(error);
  for (const proc of processes) console.error(`--- output of process ${proc.pid}:\n${proc.output()}`);
} finally {
  await proxy?.close();
  await Promise.all(processes.map((proc) => proc.stop('SIGTERM', 10_000)));
  await redis.stop();
}
process.exit(code);
