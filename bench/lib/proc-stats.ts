import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** Resident set size of a process (bytes), from /proc (Linux). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (match === null) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

/** User and system CPU time (ms) a process has used, from /proc/<pid>/stat (Linux, 100 ticks per second). */
export function cpuTimes(pid: number): { readonly user: number; readonly system: number } {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

/** CPU time (user + system, ms) a process has used. */
export function cpuMs(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

/** Resolves once `pid` has used under 5 % of a core for two 500 ms windows in a row (or after `timeoutMs`). */
export async function waitForQuiet(pid: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  let last = cpuMs(pid);
  while (quiet < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = cpuMs(pid);
    quiet = now - last <= 25 ? quiet + 1 : 0;
    last = now;
  }
}

/** Local ports of the TCP connections `pid` holds to `remotePort` on loopback (from /proc/<pid>/fd and /proc/net/tcp). */
export function localPortsTo(pid: number, remotePort: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const match = /^socket:\[(\d+)\]$/.exec(target);
      if (match?.[1] !== undefined) inodes.add(match[1]);
    } catch {
      // the fd closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
      const cols = line.trim().split(/\s+/);
      const [, local, remote, state, , , , , , inode] = cols;
      if (local === undefined || remote === undefined || inode === undefined || !inodes.has(inode)) continue;
      const rport = Number.parseInt(remote.split(':')[1] ?? '', 16);
      // state 01 = ESTABLISHED
      if (rport === remotePort && state === '01') ports.add(Number.parseInt(local.split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

/** One line of CLIENT LIST as key=value fields. */
export type ClientInfo = Record<string, string>;

/** Parses CLIENT LIST. */
export async function clientList(redis: Redis): Promise<ClientInfo[]> {
  const text = (await redis.client('LIST')) as string;
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) =>
      Object.fromEntries(
        line
          .trim()
          .split(' ')
          .map((pair) => pair.split('=', 2) as [string, string]),
      ),
    );
}

/** The Redis server's clients that are `pid`'s connections, matched by address (CLIENT LIST `addr` port). */
export async function clientsOfProcess(redis: Redis, pid: number, redisPort: number): Promise<ClientInfo[]> {
  const ports = localPortsTo(pid, redisPort);
  const clients = await clientList(redis);
  return clients.filter((client) => ports.has(Number((client.addr ?? '').split(':').at(-1))));
}
