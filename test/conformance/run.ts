/**
 * Runs the MCP conformance suite (@modelcontextprotocol/conformance, server scenarios) against taskgate as
 * it is deployed: a private redis-server, TWO gateway processes and one worker process serving the
 * conformance fixture, all started with the `taskgate` CLI from the workspace sources, behind a round-robin
 * proxy without stickiness. Exits with the suite's code: 0 when every scenario passes or fails as
 * `expected-failures.yml` says.
 *
 *   node --conditions=taskgate-source --import tsx test/conformance/run.ts [--scenario <name>] [--verbose]
 *
 * With `--url <mcp endpoint>` it starts nothing and runs the suite against that endpoint.
 *
 * The suite needs Node 22: it runs on the `node` npm package of this folder, installed with `npm ci` here
 * when missing (this folder is its own npm project, not a workspace).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type ForkedProcess, forkNode, startRedis, startRoundRobinProxy } from '@taskgate/test-harness';
import { forkGateway, waitForOutput } from '../gateway/fixtures/processes.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = `${root}packages/cli/src/run.ts`;
const suite = `${here}node_modules/@modelcontextprotocol/conformance/dist/index.js`;
const node22 = `${here}node_modules/.bin/node`;

const { values } = parseArgs({
  options: { scenario: { type: 'string' }, url: { type: 'string' }, verbose: { type: 'boolean', default: false } },
});

/** `npm ci` in this folder unless its node_modules match its lockfile (as `npm ci` left them). */
function ensureSuiteInstalled(): void {
  const stamp = `${here}node_modules/.package-lock.json`;
  const fresh =
    existsSync(suite) &&
    existsSync(node22) &&
    existsSync(stamp) &&
    statSync(stamp).mtimeMs >= statSync(`${here}package-lock.json`).mtimeMs;
  if (fresh && process.env.CI === undefined) return;
  console.log('conformance: installing the suite and Node 22 (npm ci in test/conformance)');
  const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: here, stdio: 'inherit' });
  if (install.status !== 0) throw new Error('npm ci in test/conformance failed');
}

function runSuite(url: string): Promise<number> {
  const args = [suite, 'server', '--url', url, '--expected-failures', `${here}expected-failures.yml`];
  args.push(...(values.scenario === undefined ? ['--suite', 'all'] : ['--scenario', values.scenario]));
  if (values.verbose === true) args.push('--verbose');
  const child = spawn(node22, args, { cwd: here, stdio: 'inherit' });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128))));
}

ensureSuiteInstalled();
// `--url`: the suite against a deployment someone else started (test/deploy/chart-processes.test.ts).
if (values.url !== undefined) process.exit(await runSuite(values.url));
const redis = await startRedis();
const processes: ForkedProcess[] = [];
let proxy: Awaited<ReturnType<typeof startRoundRobinProxy>> | undefined;
let code = 1;
try {
  const env = {
    REDIS_URL: redis.url,
    TASKGATE_KEY_PREFIX: 'conformance',
    TASKGATE_CURSOR_SECRET: 'conformance-cursor-secret-0123456789',
  };
  const worker = forkNode(cli, ['worker', '--tools', '@taskgate/conformance-fixture'], env, { cwd: root });
  processes.push(worker);
  const gateways = await Promise.all([forkGateway(env), forkGateway(env)]);
  processes.push(...gateways.map((gateway) => gateway.proc));
  await waitForOutput(worker, /worker ready/, 60_000);
  const urls = gateways.map((gateway) => gateway.url);
  proxy = await startRoundRobinProxy(urls.map((url) => new URL(url).origin));
  console.log(`conformance: 2 gateways (${urls.join(', ')}) and a worker behind ${proxy.origin}`);
  code = await runSuite(`${proxy.origin}/mcp`);
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
