/**
 * Every Redis command of one create → result, as the server runs it (MONITOR): `bash scripts/bench --trace`
 * (or `node --conditions=taskgate-source --import tsx bench/trace-task.ts [--tasks N]`). Starts one taskgate
 * gateway and worker on a private redis-server, warms up, then runs N tasks (default 3) one at a time with the
 * lean client and with the SDK client and prints, per client, each command with its source (the client that
 * sent it, or `lua`) in order, then the counts per task, then the same counts by step: each command sent, with
 * the commands a script ran charged to that script (named by its number of keys and first key). Key arguments
 * are shortened to their kind (ids left out). `--in-flight K` runs the N tasks K at a time instead (the cost
 * under load: fewer idle fetches of BullMQ's worker, more tasks/result calls that find the task still running).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseConfig } from './lib/config.js';
import { ProcessSet } from './lib/processes.js';
import { isAdminCommand } from './lib/redis-stats.js';
import { closedLoop } from './lib/stats.js';
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

/** What a sent command is, as a step: a script by its number of keys and first key, else the command and key. */
function stepOf(name: string, args: readonly string[]): string {
  if (name === 'evalsha' || name === 'eval') return `script ${args[2] ?? ''} ${shorten(args[3] ?? '')}`;
  return `${name} ${shorten(args[1] ?? '')}`;
}

async function trace(
  subject: Subject,
  tasks: number,
  inFlight: number,
  monitorOf: () => Promise<import('ioredis').Redis>,
) {
  await subject.prepare(Math.ceil(inFlight / 25));
  for (let i = 0; i < 5; i++) await subject.run(0);
  await sleep(300);
  const monitor = await (await monitorOf()).monitor();
  const lines: string[] = [];
  const counts = new Map<string, number>();
  // Commands by step: a script's own commands follow its EVALSHA in MONITOR's order (a script runs alone).
  const steps = new Map<string, number>();
  let step = '';
  let total = 0;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const name = (args[0] ?? '').toLowerCase();
    if (isAdminCommand(name)) return;
    const from = source === 'lua' ? 'lua' : 'sent';
    const kind = `${from} ${name}`;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    if (from === 'sent') step = stepOf(name, args);
    steps.set(step, (steps.get(step) ?? 0) + 1);
    total++;
    if (lines.length < 400) lines.push(`${from.padEnd(4)} ${[name, ...args.slice(1, 4).map(shorten)].join(' ')}`);
  });
  await sleep(100);
  if (inFlight <= 1) for (let i = 0; i < tasks; i++) await subject.run(0);
  else await closedLoop({ inFlight, total: tasks, maxMs: 120_000, run: (lane) => subject.run(lane) });
  await sleep(300);
  monitor.disconnect();
  return { lines, counts, steps, total };
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

/** One finished task's hash: its encoding, MEMORY USAGE and each field with the length of its value. */
async function oneTaskHash(redis: import('ioredis').Redis): Promise<string> {
  const [, keys] = await redis.scan('0', 'MATCH', '*:task:*', 'COUNT', 10_000);
  for (const key of keys) {
    if ((await redis.type(key)) !== 'hash' || (await redis.hget(key, 'outcome')) === null) continue;
    const fields = await redis.hgetall(key);
    const encoding = await redis.object('ENCODING', key);
    const bytes = await redis.memory('USAGE', key);
    const listed = Object.entries(fields).map(([field, value]) => `${field}=${value.length}`);
    return `${shorten(key)}: ${encoding}, ${bytes} B, ${listed.length} fields: ${listed.join(' ')}`;
  }
  return 'no finished task found';
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { tasks: { type: 'string' }, 'in-flight': { type: 'string' } },
    strict: false,
  });
  const tasks = Number(values.tasks ?? 3);
  const inFlight = Number(values['in-flight'] ?? 1);
  const config = parseConfig(['--quick', '--no-fastmcp'], root);
  const logDir = mkdtempSync(join(tmpdir(), 'taskgate-trace-'));
  const processes = new ProcessSet(logDir);
  try {
    const taskgate = await startTaskgate(config, processes, root);
    for (const [client, subject] of [
      ['lean', taskgate.lean],
      ['SDK', taskgate.subject],
    ] as const) {
      const { lines, counts, steps, total } = await trace(subject, tasks, inFlight, async () =>
        taskgate.redis.duplicate(),
      );
      process.stdout.write(
        `\n## ${client} client: ${tasks} tasks, ${inFlight} in flight, ${(total / tasks).toFixed(1)} commands per task\n`,
      );
      if (inFlight <= 1) process.stdout.write(`${lines.slice(0, Math.ceil(lines.length / tasks)).join('\n')}\n`);
      const perTask = [...counts].sort((a, b) => b[1] - a[1]).map(([step, n]) => `${step}×${(n / tasks).toFixed(1)}`);
      process.stdout.write(`per task: ${perTask.join(' ')}\n`);
      process.stdout.write('by step (commands per task, a script with the commands it ran):\n');
      for (const [step, n] of [...steps].sort((a, b) => b[1] - a[1])) {
        process.stdout.write(`  ${(n / tasks).toFixed(2).padStart(6)}  ${step}\n`);
      }
    }
    process.stdout.write(
      `\n## what stays in Redis after ${tasks * 2 + 10} finished tasks (MEMORY USAGE by kind of key)\n`,
    );
    process.stdout.write(`${await memoryByKind(taskgate.redis)}\n`);
    process.stdout.write(
      `\n## one finished task's hash (field=bytes of its value)\n${await oneTaskHash(taskgate.redis)}\n`,
    );
  } finally {
    await processes.stopAll();
    rmSync(logDir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
