/**
 * HAProxy (Debian's package, installed by `ensure_haproxy` in scripts/lib/ensure-deps.sh) as the load balancer
 * in front of local processes: round robin, no affinity, `option httpchk` on the given path, SSE-friendly
 * timeouts, bound to 127.0.0.1. Started in the foreground (`-db`) and stopped by its pid.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface HaproxyOptions {
  /** Backend origins as host:port. */
  readonly servers: readonly string[];
  /** Health check request: path and an optional Host header (as the readiness probe declares them). */
  readonly checkPath: string;
  readonly checkHost?: string;
}

export interface Haproxy {
  /** `http://127.0.0.1:<port>` of the frontend. */
  readonly origin: string;
  readonly pid: number;
  /** Per backend server (in `servers` order): its health status (`UP`, `DOWN`, …) and sessions served. */
  servers(): Promise<Array<{ status: string; sessions: number }>>;
  output(): string;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The generated configuration. */
export function haproxyConfig(options: HaproxyOptions, port: number, statsPort: number): string {
  const host = options.checkHost === undefined ? '' : ` hdr Host ${options.checkHost}`;
  return [
    'global',
    '  maxconn 1024',
    'defaults',
    '  mode http',
    '  timeout connect 5s',
    '  timeout client 1h',
    '  timeout server 1h',
    '  timeout tunnel 1h',
    'frontend mcp',
    `  bind 127.0.0.1:${port}`,
    '  default_backend gateways',
    'backend gateways',
    '  balance roundrobin',
    '  option httpchk',
    `  http-check send meth GET uri ${options.checkPath}${host}`,
    '  default-server inter 300ms fall 2 rise 1',
    ...options.servers.map((server, index) => `  server pod${index} ${server} check`),
    'listen stats',
    `  bind 127.0.0.1:${statsPort}`,
    '  stats enable',
    '  stats uri /stats',
    '',
  ].join('\n');
}

/** Starts HAProxy; resolves once it accepts connections on its frontend. */
export async function startHaproxy(options: HaproxyOptions): Promise<Haproxy> {
  const [port, statsPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'taskgate-haproxy-'));
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(cfg, haproxyConfig(options, port, statsPort));
  const child: ChildProcess = spawn('haproxy', ['-f', cfg, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid ?? -1;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(pid, 'SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const servers = async (): Promise<Array<{ status: string; sessions: number }>> => {
    const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
    const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n');
    const columns = (header ?? '').split(',');
    const at = (row: string[], name: string): string => row[columns.indexOf(name)] ?? '';
    return rows
      .map((line) => line.split(','))
      .filter((row) => at(row, 'pxname') === 'gateways' && at(row, 'svname').startsWith('pod'))
      .map((row) => ({ status: at(row, 'status'), sessions: Number(at(row, 'stot')) }));
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await servers();
      break;
    } catch (error) {
      if (child.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`haproxy did not start: ${String(error)}\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return { origin: `http://127.0.0.1:${port}`, pid, servers, output: () => output, stop };
}
