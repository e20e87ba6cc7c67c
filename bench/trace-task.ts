/**
 * Every Redis command of one create → result, as the server runs it (MONITOR): `bash scripts/bench --trace`
 * (or `node --conditions=taskgate-source --import tsx bench/trace-task.ts [--tasks N]`). Starts one taskgate
 * gateway and worker on a private redis-server, warms up, then runs N tasks (default 3) one at a time with the
 * lean client and with the SDK client and prints, per client, each command with its source (the client that
 * sent it, or `lua`) in order, then the counts per task. Key arguments are shortened to their kind (ids left out).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseConfig } from './lib/config.js';
import { ProcessSet } from './lib/processes.js';
import { isAdminCommand } from './lib/redis-stats.js';
import type { Subject } from './systems/mcp-subject.js';
import { startTaskgate } from './systems/taskgate.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A key or argument with its random ids replaced, so the same step reads the same in every task. */
function shorten(arg: string): string {
  return arg
    .replace(/[A-Za-z0-9_-]{20,}/g, '…')
    .replace(/\{[A-Za-z0-9_-]{4}\}/g, '{t}')
    .slice(0, 60);
}

async function trace(subject: Subject, tasks: number, monitorOf: () => Promise<import('ioredis').Redis>) {
  await subject.prepare(1);
  for (let i = 0; i < 5; i++) await subject.run(0);
  await sleep(300);
  const monitor = await (await monitorOf()).monitor();
  const lines: string[] = [];
  const counts = new Map<string, number>();
  let total = 0;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const name = (args[0] ?? '').toLowerCase();
    if (isAdminCommand(name)) return;
    const from = source === 'lua' ? 'lua' : 'sent';
    const step = `${from} ${name}`;
    counts.set(step, (counts.get(step) ?? 0) + 1);
    total++;
    if (lines.length < 400) lines.push(`${from.padEnd(4)} ${[name, ...args.slice(1, 4).map(shorten)].join(' ')}`);
  });
  await sleep(100);
  for (let i = 0; i < tasks; i++) await subject.run(0);
  await sleep(300);
  monitor.disconnect();
  return { lines, counts, total };
}

/** Keys by kind (ids replaced), with their count and MEMORY USAGE in bytes, largest first. */
async function memoryByKind(redis: import('ioredis').Redis): Promise<string> {
  const kinds = new Map<string, { keys: number; bytes: number }>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const kind = shorten(key).replace(/:\d+$/, ':<n>');
      const bytes = Number(await redis.memory('USAGE', key));
      const entry = kinds.get(kind) ?? { keys: 0, bytes: 0 };
      entry.keys += 1;
      entry.bytes += bytes;
      kinds.set(kind, entry);
    }
  } while (cursor !== '0');
  return [...kinds]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .map(([kind, { keys, bytes }]) => `${String(bytes).padStart(8)} B  ${String(keys).padStart(5)} keys  ${kind}`)
    .join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { tasks: { type: 'string' } }, strict: false });
  const tasks = Number(values.tasks ?? 3);
  const config = parseConfig(['--quick', '--no-fastmcp'], root);
  const logDir = mkdtempSync(join(tmpdir(), 'taskgate-trace-'));
  const processes = new ProcessSet(logDir);
  try {
    const taskgate = await startTaskgate(config, processes, root);
    for (const [client, subject] of [
      ['lean', taskgate.lean],
      ['SDK', taskgate.subject],
    ] as const) {
      const { lines, counts, total } = await trace(subject, tasks, async () => taskgate.redis.duplicate());
      process.stdout.write(`\n## ${client} client: ${tasks} tasks, ${(total / tasks).toFixed(1)} commands per task\n`);
      process.stdout.write(`${lines.slice(0, Math.ceil(lines.length / tasks)).join('\n')}\n`);
      const perTask = [...counts].sort((a, b) => b[1] - a[1]).map(([step, n]) => `${step}×${(n / tasks).toFixed(1)}`);
      process.stdout.write(`per task: ${perTask.join(' ')}\n`);
    }
    process.stdout.write(
      `\n## what stays in Redis after ${tasks * 2 + 10} finished tasks (MEMORY USAGE by kind of key)\n`,
    );
    process.stdout.write(`${await memoryByKind(taskgate.redis)}\n`);
  } finally {
    await processes.stopAll();
    rmSync(logDir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
