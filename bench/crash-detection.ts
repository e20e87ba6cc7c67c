/**
 * How long a task waits after its worker is killed with -9: `bash scripts/bench --crash [--rounds N]
 * [--settings LOCK/STALLED,...]`. For each pair of `TASKGATE_LOCK_DURATION_MS` / `TASKGATE_STALLED_INTERVAL_MS`
 * ("default": the worker's own defaults) and each round: a private redis-server, one `taskgate worker` process
 * (the CLI, from sources) running tasks of a tool with `retryOnCrash` and of one without, a second worker
 * started, a random wait (the kill lands anywhere in the lock-renewal cycle), SIGKILL of the first by pid; then
 * the time from the kill until each task runs again (`attempt` 2 on its record) or is failed. Prints one table and
 * writes it as JSON under bench/results/. Every process it started is stopped by pid.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Keys, TaskStore, ToolCatalog, ToolQueues } from '@taskgate/core';
import { startRedisServer } from '@taskgate/dev-redis';
import { Redis } from 'ioredis';
import { ProcessSet, waitForLog, waitUntil } from './lib/processes.js';
import { summarize } from './lib/stats.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const say = (text: string): void => void process.stderr.write(`${text}\n`);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const USAGE = `usage: bash scripts/bench --crash [--rounds N] [--settings default,30000/30000,10000/5000] [--tasks N]

  --rounds N     kills per setting (default 3)
  --settings     lock/stalled pairs in ms; "default" leaves both to the worker (default: default,30000/30000,5000/2500)
  --tasks N      tasks per tool in flight on the killed worker (default 4)`;

interface Setting {
  readonly label: string;
  readonly lockMs?: number;
  readonly stalledMs?: number;
}

function parseSetting(text: string): Setting {
  if (text === 'default') return { label: 'default' };
  const match = /^([0-9]+)\/([0-9]+)$/.exec(text);
  if (match === null) throw new Error(`--settings: "${text}" is not LOCK/STALLED (ms) or "default"`);
  return { label: text, lockMs: Number(match[1]), stalledMs: Number(match[2]) };
}

/** One round: kill the worker holding the tasks, time until each runs again (rerun) or fails (once). */
async function round(setting: Setting, tasks: number, logDir: string, name: string) {
  const processes = new ProcessSet(logDir);
  try {
    const server = await startRedisServer();
    processes.add('redis-server', () => server.stop());
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    processes.add('admin connection', async () => void (await redis.quit().catch(() => redis.disconnect())));
    const keys = new Keys('tg');
    const store = new TaskStore({ redis, keys, cursorSecret: 'crash-detection-cursor-secret-0123' });
    const queues = new ToolQueues({ connection: redis, keys });
    processes.add('queues', () => queues.close());
    const catalog = new ToolCatalog({ redis, keys });
    const env: Record<string, string> = {
      REDIS_URL: server.url,
      TASKGATE_KEY_PREFIX: 'tg',
      TASKGATE_TOOLS: `${root}bench/fixtures/crash-tools.ts`,
      TASKGATE_METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      ...(setting.lockMs !== undefined && { TASKGATE_LOCK_DURATION_MS: String(setting.lockMs) }),
      ...(setting.stalledMs !== undefined && { TASKGATE_STALLED_INTERVAL_MS: String(setting.stalledMs) }),
    };
    const cli = `${root}packages/cli/src/run.ts`;
    const victim = processes.spawnNode(`${name}-victim`, cli, ['worker'], env);
    await waitForLog(victim, /"msg":"worker ready"/);

    const ids: Record<'rerun' | 'once', string[]> = { rerun: [], once: [] };
    for (const [kind, tool] of [
      ['rerun', 'held_rerun'],
      ['once', 'held_once'],
    ] as const) {
      const entry = await catalog.get(tool);
      if (entry === undefined) throw new Error(`${tool} is not in the catalog`);
      for (let i = 0; i < tasks; i++) {
        const task = await store.create({ owner: 'bench', tool });
        await queues.enqueue(
          { queue: entry.queue, attempts: entry.attempts },
          { taskId: task.taskId, ownerId: Keys.ownerId('bench'), tool, arguments: { ms: 600_000 } },
        );
        ids[kind].push(task.taskId);
      }
    }
    const all = [...ids.rerun, ...ids.once];
    const read = (id: string) => store.read(id);
    await waitUntil('every task working on the first worker', async () => {
      const records = await Promise.all(all.map(read));
      return records.every((t) => t?.status === 'working' && t.attempt === 1);
    });
    const rescuer = processes.spawnNode(`${name}-rescuer`, cli, ['worker'], env);
    await waitForLog(rescuer, /"msg":"worker ready"/);
    // Anywhere in the lock-renewal cycle (renewed every lock/2).
    await sleep(Math.random() * ((setting.lockMs ?? 30_000) / 2));
    process.kill(victim.pid, 'SIGKILL');
    const killedAt = Date.now();
    await victim.exited;

    const waited = new Map<string, number>();
    const deadline = killedAt + 3 * ((setting.lockMs ?? 30_000) + (setting.stalledMs ?? 30_000)) + 10_000;
    while (waited.size < all.length && Date.now() < deadline) {
      const records = await Promise.all(all.map(async (id) => [id, await read(id)] as const));
      for (const [id, task] of records) {
        if (waited.has(id) || task === undefined) continue;
        const moved = ids.rerun.includes(id) ? (task.attempt ?? 0) >= 2 : task.status === 'failed';
        if (moved) waited.set(id, Date.now() - killedAt);
      }
      await sleep(50);
    }
    if (waited.size < all.length) throw new Error(`${all.length - waited.size} tasks did not move within the deadline`);
    return {
      rerun: ids.rerun.map((id) => waited.get(id) as number),
      failed: ids.once.map((id) => waited.get(id) as number),
    };
  } finally {
    await processes.stopAll();
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== '--crash'),
    options: {
      rounds: { type: 'string', default: '3' },
      settings: { type: 'string', default: 'default,30000/30000,5000/2500' },
      tasks: { type: 'string', default: '4' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const rounds = Number(values.rounds);
  const tasks = Number(values.tasks);
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer');
  if (!Number.isSafeInteger(tasks) || tasks < 1) throw new Error('--tasks must be a positive integer');
  const settings = values.settings.split(',').map(parseSetting);
  const logDir = mkdtempSync(join(tmpdir(), 'taskgate-crash-bench-'));
  const started = Date.now();
  const load = loadavg()[0] ?? 0;
  const results = [];
  let failed = true;
  try {
    for (const setting of settings) {
      const rerun: number[] = [];
      const failures: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const measured = await round(setting, tasks, logDir, `${setting.label.replace('/', '-')}-${i}`);
        rerun.push(...measured.rerun);
        failures.push(...measured.failed);
        say(
          `${setting.label} round ${i + 1}: rerun ${measured.rerun.join(', ')} ms; failed ${measured.failed.join(', ')} ms`,
        );
      }
      results.push({
        ...setting,
        rerun: summarize(rerun),
        failed: summarize(failures),
        samples: { rerun, failed: failures },
      });
    }
    const seconds = (ms: number): string => (ms / 1000).toFixed(1);
    const lines = [
      '| lock / stalled interval (ms) | kills | kill → running again: min / p50 / max (s) | kill → failed: min / p50 / max (s) |',
      '|---|---|---|---|',
      ...results.map((r) => {
        const min = (s: readonly number[]): number => Math.min(...s);
        return `| ${r.label} | ${rounds} | ${seconds(min(r.samples.rerun))} / ${seconds(r.rerun.p50)} / ${seconds(r.rerun.max)} | ${seconds(min(r.samples.failed))} / ${seconds(r.failed.p50)} / ${seconds(r.failed.max)} |`;
      }),
    ];
    process.stdout.write(`\n${lines.join('\n')}\n\n`);
    const machine = `${cpus().length} cores, load average ${load.toFixed(1)} → ${loadavg()[0]?.toFixed(1)}`;
    process.stdout.write(`machine: ${machine}\n`);
    const record = {
      date: new Date().toISOString(),
      command: `bash scripts/bench ${process.argv.slice(2).join(' ')}`,
      durationS: Math.round((Date.now() - started) / 1000),
      machine,
      rounds,
      tasks,
      results,
    };
    const outDir = join(root, 'bench/results');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'crash-detection-latest.json'), `${JSON.stringify(record, null, 2)}\n`);
    process.stdout.write(`results: ${join(outDir, 'crash-detection-latest.json')} (${record.durationS} s)\n`);
    failed = false;
    return 0;
  } catch (error) {
    say(`crash bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  } finally {
    if (failed) say(`crash bench: process logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
}

process.exit(await main());
