import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { killOnExit } from './exit-kill.js';
import { freePort, type RedisServer, startRedis } from './redis-server.js';

/** One master, one replica and three sentinels on loopback ports; `stop` ends every process it started by pid. */
export interface RedisSentinelSet extends AsyncDisposable {
  readonly name: string;
  readonly master: RedisServer;
  readonly replica: RedisServer;
  /** The sentinels' ports on 127.0.0.1. */
  readonly sentinelPorts: readonly number[];
  /** `127.0.0.1:p1,127.0.0.1:p2,...`: the value of TASKGATE_REDIS_SENTINELS. */
  readonly sentinels: string;
  /** The port the sentinels name as the master now. */
  masterPort(): Promise<number>;
  /** `SENTINEL FAILOVER`; resolves once the sentinels name the other server as the master. */
  failover(timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function askSentinel<T>(port: number, run: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return await run(client);
  } finally {
    client.disconnect();
  }
}

async function startSentinel(dir: string, index: number, name: string, masterPort: number) {
  const port = await freePort();
  const conf = join(dir, `sentinel-${index}.conf`);
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 5000`,
      '',
    ].join('\n'),
  );
  const child = spawn(binary, [conf, '--sentinel'], { stdio: 'ignore' });
  killOnExit(child);
  return { port, child };
}

/** Starts the set and resolves once every sentinel knows the master and its replica. */
export async function startRedisSentinels(name = 'taskgate'): Promise<RedisSentinelSet> {
  const master = await startRedis();
  const replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(master.port)] });
  const dir = mkdtempSync(join(tmpdir(), 'taskgate-sentinel-'));
  const sentinels = await Promise.all([0, 1, 2].map((index) => startSentinel(dir, index, name, master.port)));
  const ports = sentinels.map((sentinel) => sentinel.port);
  const masterPort = async (): Promise<number> => {
    const [, port] = (await askSentinel(ports[0] as number, (client) =>
      client.call('SENTINEL', 'get-master-addr-by-name', name),
    )) as [string, string];
    return Number(port);
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ready = await Promise.all(
      ports.map((port) =>
        askSentinel(port, async (client) => {
          const replicas = (await client.call('SENTINEL', 'replicas', name)) as string[][];
          const sentinelsSeen = (await client.call('SENTINEL', 'sentinels', name)) as string[][];
          return replicas.length === 1 && sentinelsSeen.length === 2;
        }).catch(() => false),
      ),
    );
    if (ready.every(Boolean)) break;
    if (Date.now() > deadline)
      throw new Error('the sentinels did not find the master, the replica and each other in 20 s');
    await sleep(200);
  }
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await Promise.all(
        sentinels.map(
          ({ child }) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGKILL');
            }),
        ),
      );
      await Promise.all([replica.stop(), master.stop()]);
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopped;
  };
  return {
    name,
    master,
    replica,
    sentinelPorts: ports,
    sentinels: ports.map((port) => `127.0.0.1:${port}`).join(','),
    masterPort,
    async failover(timeoutMs = 20_000) {
      const before = await masterPort();
      await askSentinel(ports[0] as number, (client) => client.call('SENTINEL', 'FAILOVER', name));
      const until = Date.now() + timeoutMs;
      for (;;) {
        const now = await masterPort();
        if (now !== before) return now;
        if (Date.now() > until) throw new Error(`no failover away from port ${before} in ${timeoutMs} ms`);
        await sleep(100);
      }
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
