/**
 * The 2026-07-28 row: taskgate's 2026-07-28 wire next to FastMCP 4 with the tasks extension (fastmcp-tasks) on
 * Docket, with the same 0 ms `noop` task tool and the same client — raw 2026-07-28 POSTs: `tools/call` (a
 * CreateTaskResult), then `tasks/get` every `--poll-ms` until the task is terminal. Each system has a private
 * redis-server; taskgate runs one gateway and one worker process, FastMCP one server process (its embedded
 * Docket worker). A third row is taskgate with inline answers on (the `noop` tool with `inlineWaitMs: 1000`,
 * its own Redis and processes): a `tools/call` that finishes within the wait is answered with its result, so
 * the round is one request. Prints one table with the ratios and writes it as JSON under bench/results/.
 *
 *   bash scripts/bench --revisions [--tasks N] [--in-flight K] [--poll-ms P]
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, startRedisServer } from '@taskgate/dev-redis';
import { parseConfig } from './lib/config.js';
import { ProcessSet, waitUntil } from './lib/processes.js';
import { closedLoop, type LoadResult } from './lib/stats.js';
import { fastmcp4Venv, fastmcp4Versions } from './systems/fastmcp4.js';
import { startTaskgateProcesses } from './systems/taskgate.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const { values } = parseArgs({
  options: {
    revisions: { type: 'boolean' },
    tasks: { type: 'string', default: '300' },
    'in-flight': { type: 'string', default: '10' },
    'poll-ms': { type: 'string', default: '20' },
  },
});
const positive = (name: string, raw: string): number => {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got '${raw}'`);
  return value;
};
const total = positive('tasks', values.tasks);
const inFlight = positive('in-flight', values['in-flight']);
const pollMs = positive('poll-ms', values['poll-ms']);

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  'io.modelcontextprotocol/clientInfo': { name: 'taskgate-bench', version: '1.0.0' },
};
let nextId = 1;

/** One 2026-07-28 request; the JSON-RPC result (JSON or the last SSE event), or throws its error. */
async function call(url: string, method: string, name: string, params: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      'Mcp-Name': name,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: META } }),
  });
  const text = await response.text();
  const data = text.startsWith('{')
    ? text
    : (text
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .at(-1)
        ?.slice(6) ?? '{}');
  const body = JSON.parse(data) as { result?: Record<string, unknown>; error?: { message: string } };
  if (body.result === undefined) throw new Error(`${method}: ${body.error?.message ?? text.slice(0, 200)}`);
  return body.result;
}

/** Create → tasks/get until terminal, as one operation. */
async function taskRound(url: string): Promise<void> {
  const created = await call(url, 'tools/call', 'noop', { name: 'noop', arguments: {} });
  if (created.resultType !== 'task') throw new Error(`tools/call answered ${String(created.resultType)}, not a task`);
  const taskId = String(created.taskId);
  for (;;) {
    const task = await call(url, 'tasks/get', taskId, { taskId });
    if (TERMINAL.has(String(task.status))) {
      if (task.status !== 'completed') throw new Error(`task ended ${String(task.status)}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Inline answers on: the `tools/call` answers the result (`complete`), or a task that is then polled. */
let inlineAnswers = 0;
async function inlineRound(url: string): Promise<void> {
  const answer = await call(url, 'tools/call', 'noop', { name: 'noop', arguments: {} });
  if (answer.resultType === 'complete') {
    inlineAnswers += 1;
    return;
  }
  if (answer.resultType !== 'task') throw new Error(`tools/call answered ${String(answer.resultType)}`);
  for (;;) {
    const task = await call(url, 'tasks/get', String(answer.taskId), { taskId: answer.taskId });
    if (TERMINAL.has(String(task.status))) {
      if (task.status !== 'completed') throw new Error(`task ended ${String(task.status)}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const outDir = join(root, 'bench', 'results');
mkdirSync(outDir, { recursive: true });
const processes = new ProcessSet(mkdtempSync(join(tmpdir(), 'taskgate-revisions-bench-')));
const results: Record<string, LoadResult> = {};
let inlineCount = 0;
try {
  const config = parseConfig([], root);
  const tgRedis = await startRedisServer();
  processes.add('taskgate redis-server', () => tgRedis.stop());
  const taskgate = await startTaskgateProcesses(config, processes, root, { REDIS_URL: tgRedis.url }, [tgRedis.pid]);
  const inlineRedis = await startRedisServer();
  processes.add('taskgate-inline redis-server', () => inlineRedis.stop());
  const inline = await startTaskgateProcesses(
    config,
    processes,
    root,
    { REDIS_URL: inlineRedis.url, BENCH_INLINE_WAIT_MS: '1000' },
    [inlineRedis.pid],
    'taskgate-inline',
  );
  const fmRedis = await startRedisServer();
  processes.add('fastmcp redis-server', () => fmRedis.stop());
  const port = await freePort();
  const server = processes.spawn(
    'fastmcp4-server',
    join(fastmcp4Venv(root), 'bin', 'python'),
    [join(root, 'bench', 'fixtures', 'fastmcp4_tasks_server.py')],
    {
      PORT: String(port),
      FASTMCP_DOCKET_URL: `redis://${fmRedis.host}:${fmRedis.port}/0`,
      FASTMCP_DOCKET_CONCURRENCY: String(config.concurrency),
      FASTMCP_LOG_LEVEL: 'WARNING',
      PYTHONUNBUFFERED: '1',
    },
  );
  const fastmcpUrl = `http://127.0.0.1:${port}/mcp`;
  await waitUntil(
    'fastmcp4-server to serve',
    async () => (await fetch(fastmcpUrl).catch(() => undefined)) !== undefined,
    {
      proc: server,
      timeoutMs: 60_000,
      intervalMs: 200,
    },
  );
  const systems = [
    {
      name: 'taskgate',
      url: taskgate.url,
      pids: [...taskgate.gateways, ...taskgate.workers].map((p) => p.pid),
      round: taskRound,
    },
    {
      name: 'taskgate-inline',
      url: inline.url,
      pids: [...inline.gateways, ...inline.workers].map((p) => p.pid),
      round: inlineRound,
    },
    { name: 'fastmcp-tasks', url: fastmcpUrl, pids: [server.pid], round: taskRound },
  ];
  for (const system of systems) {
    await system.round(system.url); // warm-up
    inlineAnswers = 0;
    console.log(`revisions: ${system.name}: ${total} tasks, ${inFlight} in flight, tasks/get every ${pollMs} ms`);
    results[system.name] = await closedLoop({
      inFlight,
      total,
      maxMs: 300_000,
      run: () => system.round(system.url),
      pids: system.pids,
    });
    if (system.name === 'taskgate-inline') inlineCount = inlineAnswers;
  }
} finally {
  await processes.stopAll();
}
const tg = results.taskgate as LoadResult;
const fm = results['fastmcp-tasks'] as LoadResult;
const tgInline = results['taskgate-inline'] as LoadResult;
const row = (name: string, r: LoadResult): string =>
  `| ${name} | ${r.n} | ${r.errors} | ${r.throughput.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} |`;
const table = [
  `2026-07-28 wire, create → tasks/get until terminal (noop, ${inFlight} in flight, poll ${pollMs} ms); ${fastmcp4Versions(root)}`,
  '| system | tasks | errors | tasks/s | p50 ms | p99 ms |',
  '|---|---|---|---|---|---|',
  row('taskgate', tg),
  row('taskgate, inline answers (inlineWaitMs 1000)', tgInline),
  row('FastMCP + fastmcp-tasks (Docket)', fm),
  `ratios: throughput taskgate/FastMCP ${(tg.throughput / fm.throughput).toFixed(2)}×, p50 FastMCP/taskgate ${(fm.p50 / tg.p50).toFixed(2)}×, p99 FastMCP/taskgate ${(fm.p99 / tg.p99).toFixed(2)}×`,
  `inline: ${inlineCount} of ${tgInline.n} calls answered inline; throughput inline/taskgate ${(tgInline.throughput / tg.throughput).toFixed(2)}×, p50 taskgate/inline ${(tg.p50 / tgInline.p50).toFixed(2)}×`,
].join('\n');
console.log(`\n${table}\n`);
const file = join(outDir, `revisions-${stamp}.json`);
writeFileSync(
  file,
  `${JSON.stringify({ inFlight, pollMs, total, results, inlineAnswers: inlineCount, versions: fastmcp4Versions(root) }, null, 2)}\n`,
);
console.log(`revisions: written ${file}`);
