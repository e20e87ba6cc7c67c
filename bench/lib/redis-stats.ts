import type { Redis } from 'ioredis';

/** Fields of one INFO section. */
export async function info(redis: Redis, section: string): Promise<Record<string, string>> {
  const text = await redis.info(section);
  const fields: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) fields[line.slice(0, at)] = line.slice(at + 1);
  }
  return fields;
}

/** Calls per command since the server started (INFO commandstats; commands run by Lua scripts included). */
export async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const fields = await info(redis, 'commandstats');
  const calls = new Map<string, number>();
  for (const [key, value] of Object.entries(fields)) {
    const match = /^calls=(\d+)/.exec(value);
    if (key.startsWith('cmdstat_') && match !== null) calls.set(key.slice(8), Number(match[1]));
  }
  return calls;
}

/** What the bench's own admin commands are called; left out of every count. */
const ADMIN = new Set(['info', 'client|list', 'client', 'config|resetstat', 'monitor', 'memory|usage', 'ping']);

/** True for the bench's own admin commands (INFO, CLIENT LIST, …), which every count leaves out. */
export function isAdminCommand(name: string): boolean {
  return ADMIN.has(name);
}

/** Per-command differences between two commandstats readings, admin commands left out. */
export function callsDelta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [name, count] of after) {
    if (ADMIN.has(name)) continue;
    const diff = count - (before.get(name) ?? 0);
    if (diff > 0) delta.set(name, diff);
  }
  return delta;
}

/** Sum of a per-command map. */
export function total(counts: Map<string, number>): number {
  let sum = 0;
  for (const count of counts.values()) sum += count;
  return sum;
}

/** Counts of MONITOR lines: top-level commands (sent by clients) and commands Lua scripts ran, by name. */
export interface MonitorCounts {
  readonly topLevel: Map<string, number>;
  readonly lua: Map<string, number>;
}

/**
 * Watches every command the server runs (MONITOR) until `stop()`. Sources tell a client's command from one a
 * Lua script ran, which INFO commandstats cannot. The bench's admin commands are left out.
 */
export async function monitorCommands(redis: Redis): Promise<{ stop(): Promise<MonitorCounts> }> {
  const counts: MonitorCounts = { topLevel: new Map(), lua: new Map() };
  // A connection of its own that sends MONITOR once connected, with its listeners in place before: ioredis can
  // mistake a MONITOR line that arrives with MONITOR's own reply for an unexpected reply ("Command queue state
  // error") and emits it as an error, which ended the whole run while `redis.monitor()` had not resolved yet.
  // The counts go on from the lines it parses; the error is reported.
  const monitor = redis.duplicate({ monitor: true, lazyConnect: true });
  monitor.on('error', (error: Error) => process.stderr.write(`bench: MONITOR connection: ${error.message}\n`));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const name = (args[0] ?? '').toLowerCase();
    if (ADMIN.has(name)) return;
    const map = source === 'lua' ? counts.lua : counts.topLevel;
    map.set(name, (map.get(name) ?? 0) + 1);
  });
  const monitoring = new Promise<void>((resolve) => monitor.once('monitoring', () => resolve()));
  await monitor.connect();
  await monitoring;
  return {
    async stop() {
      monitor.disconnect();
      return counts;
    },
  };
}

/** The `n` largest entries of a count map, as `name×count` text. */
export function topCounts(counts: Map<string, number>, n: number, per = 1): string {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, count]) => `${name}×${Number((count / per).toFixed(1))}`)
    .join(' ');
}
