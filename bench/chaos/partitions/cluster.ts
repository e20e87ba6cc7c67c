/**
 * The partition run's deployment, each process in a network namespace of its own on the run's bridge: a Redis
 * primary and its replica (append-only file, fsync always), three Sentinels, gateways and workers of the
 * `taskgate` CLI that find the primary through the Sentinels. Every process is started with `ip netns exec`,
 * which execs it: the pid the run holds is the process itself, so kill and SIGSTOP reach it.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SOURCE_EXEC_ARGV } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { answers200, type BenchProcess, type ProcessSet, waitUntil } from '../../lib/processes.js';
import type { PartitionConfig } from './config.js';
import type { NetNode, RunNetwork } from './netns.js';

export const MASTER_NAME = 'tgp';
const GATEWAY_PORT = 3000;
const METRICS_PORT = 9464;

/** One process slot of the deployment: its node, the process now in it, how often it was started. */
export interface Member {
  readonly role: 'redis' | 'sentinel' | 'gateway' | 'worker';
  readonly node: NetNode;
  proc: BenchProcess;
  starts: number;
}

export interface PartitionCluster {
  readonly net: RunNetwork;
  readonly redis: readonly Member[];
  readonly sentinels: readonly Member[];
  readonly gateways: readonly Member[];
  readonly workers: readonly Member[];
  /** `Bearer` tokens of the clients' principals. */
  readonly tokens: readonly string[];
  /** `http://<ip>:3000/mcp` of each gateway. */
  readonly urls: readonly string[];
  readonly logFiles: () => string[];
  /** The Redis member the Sentinels' majority names as the primary now (undefined: no majority answers). */
  primary(): Promise<Member | undefined>;
  /** Starts the member's process again (after a kill); resolves once it serves. */
  start(member: Member): Promise<void>;
  /** Resolves once a majority names a primary that has an online replica, and every gateway and worker is ready. */
  settled(timeoutMs: number): Promise<boolean>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One short-lived connection to a node's Redis or Sentinel port; undefined when it does not answer in time. */
export async function ask<T>(ip: string, port: number, run: (client: Redis) => Promise<T>): Promise<T | undefined> {
  const client = new Redis({
    host: ip,
    port,
    lazyConnect: true,
    connectTimeout: 800,
    commandTimeout: 800,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return await run(client);
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}

/** Builds the network, starts every process; registers each with `processes` and the network's removal. */
export async function startPartitionCluster(
  config: PartitionConfig,
  processes: ProcessSet,
  root: string,
  net: RunNetwork,
): Promise<PartitionCluster> {
  net.up();
  const at = (role: Member['role'], name: string, host: number): Member => ({
    role,
    node: net.addNode(name, host),
    proc: undefined as never,
    starts: 0,
  });
  const redis = [at('redis', 'r1', 11), at('redis', 'r2', 12)];
  const sentinels = [1, 2, 3].map((i) => at('sentinel', `s${i}`, 20 + i));
  const gateways = Array.from({ length: config.gateways }, (_, i) => at('gateway', `g${i + 1}`, 31 + i));
  const workers = Array.from({ length: config.workers }, (_, i) => at('worker', `w${i + 1}`, 51 + i));
  const [primary, replica] = redis as [Member, Member];
  const dirOf = (member: Member): string => {
    const dir = join(processes.logDir, member.node.name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  for (const member of redis) {
    writeFileSync(
      join(dirOf(member), 'redis.conf'),
      [
        `bind ${member.node.ip}`,
        'port 6379',
        'protected-mode no',
        `dir ${dirOf(member)}`,
        'appendonly yes',
        'appendfsync always',
        'save ""',
        'repl-timeout 5',
        ...(member === replica ? [`replicaof ${primary.node.ip} 6379`] : []),
        '',
      ].join('\n'),
    );
  }
  for (const member of sentinels) {
    writeFileSync(
      join(dirOf(member), 'sentinel.conf'),
      [
        `bind ${member.node.ip}`,
        'port 26379',
        'protected-mode no',
        `dir ${dirOf(member)}`,
        `sentinel monitor ${MASTER_NAME} ${primary.node.ip} 6379 2`,
        `sentinel down-after-milliseconds ${MASTER_NAME} 1500`,
        `sentinel failover-timeout ${MASTER_NAME} 6000`,
        '',
      ].join('\n'),
    );
  }
  const tokens = Array.from({ length: config.principals }, () => randomBytes(12).toString('hex'));
  const wait = config.replication === 'wait';
  const env: Record<string, string> = {
    REDIS_URL: 'redis://unused:6379',
    TASKGATE_REDIS_SENTINELS: sentinels.map((member) => `${member.node.ip}:26379`).join(','),
    TASKGATE_REDIS_SENTINEL_NAME: MASTER_NAME,
    TASKGATE_REDIS_CLUSTER_NODES: '',
    TASKGATE_KEY_PREFIX: 'part',
    TASKGATE_CURSOR_SECRET: randomBytes(24).toString('base64url'),
    // The clients name a gateway by its address on the bridge.
    TASKGATE_ALLOWED_HOSTS: gateways.flatMap((m) => [m.node.ip, `${m.node.ip}:${GATEWAY_PORT}`]).join(','),
    TASKGATE_AUTH: 'tokens',
    TASKGATE_TOKENS: tokens.map((token, i) => `${token}=principal-${i}`).join(','),
    LOG_LEVEL: config.logLevel,
    TASKGATE_RATE_LIMIT_CREATE: 'off',
    TASKGATE_RATE_LIMIT_READ: 'off',
    TASKGATE_RATE_LIMIT_CANCEL: 'off',
    TASKGATE_MAX_ACTIVE_TASKS: '1000',
    TASKGATE_DRAIN_TIMEOUT_MS: '3000',
    TASKGATE_LOCK_DURATION_MS: '3000',
    TASKGATE_STALLED_INTERVAL_MS: '3000',
    TASKGATE_SSE_RETRY_MS: '200',
    TASKGATE_REDIS_COMMAND_TIMEOUT_MS: '2000',
    TASKGATE_REDIS_WAIT_REPLICAS: wait ? '1' : '0',
    TASKGATE_REDIS_WAIT_TIMEOUT_MS: '500',
  };
  const cli = `${root}packages/cli/src/run.ts`;
  const logFiles: string[] = [];
  const spawn = (member: Member): BenchProcess => {
    member.starts += 1;
    const name = `${member.node.name}.${member.starts}`;
    const inNs = (command: string, args: readonly string[], extra: Record<string, string> = {}): BenchProcess =>
      processes.spawn(name, 'ip', ['netns', 'exec', member.node.ns, command, ...args], extra);
    const node = (args: readonly string[], extra: Record<string, string>): BenchProcess =>
      inNs(process.execPath, [...SOURCE_EXEC_ARGV, cli, ...args], { ...env, ...extra });
    switch (member.role) {
      case 'redis':
        return inNs(process.env.REDIS_SERVER_BIN ?? 'redis-server', [join(dirOf(member), 'redis.conf')]);
      case 'sentinel':
        return inNs(process.env.REDIS_SERVER_BIN ?? 'redis-server', [
          join(dirOf(member), 'sentinel.conf'),
          '--sentinel',
        ]);
      case 'gateway':
        return node(['gateway'], { HOST: member.node.ip, PORT: String(GATEWAY_PORT) });
      case 'worker':
        return node(['worker', '--tools', `${root}bench/chaos/partitions/tools.ts`], {
          TASKGATE_METRICS_HOST: member.node.ip,
          TASKGATE_METRICS_PORT: String(METRICS_PORT),
        });
    }
  };
  const ready = async (member: Member): Promise<boolean> => {
    const { ip } = member.node;
    switch (member.role) {
      case 'redis':
      case 'sentinel':
        return (await ask(ip, member.role === 'redis' ? 6379 : 26379, (c) => c.ping())) === 'PONG';
      case 'gateway':
        return answers200(`http://${ip}:${GATEWAY_PORT}/readyz`).catch(() => false);
      case 'worker':
        return answers200(`http://${ip}:${METRICS_PORT}/readyz`).catch(() => false);
    }
  };
  const start = async (member: Member): Promise<void> => {
    member.proc = spawn(member);
    logFiles.push(member.proc.logFile);
    await waitUntil(`${member.proc.name} ready`, () => ready(member), {
      proc: member.proc,
      timeoutMs: 60_000,
      intervalMs: 200,
    });
  };
  await Promise.all(redis.map(start));
  await Promise.all(sentinels.map(start));
  await Promise.all([...gateways, ...workers].map(start));

  const primaryNow = async (): Promise<Member | undefined> => {
    const named = await Promise.all(
      sentinels.map((s) =>
        ask(s.node.ip, 26379, (c) => c.call('SENTINEL', 'get-master-addr-by-name', MASTER_NAME) as Promise<string[]>),
      ),
    );
    const votes = new Map<string, number>();
    for (const answer of named) if (answer?.[0] !== undefined) votes.set(answer[0], (votes.get(answer[0]) ?? 0) + 1);
    const [ip] = [...votes].find(([, n]) => n >= 2) ?? [];
    return redis.find((member) => member.node.ip === ip);
  };
  return {
    net,
    redis,
    sentinels,
    gateways,
    workers,
    tokens,
    urls: gateways.map((member) => `http://${member.node.ip}:${GATEWAY_PORT}/mcp`),
    logFiles: () => [...logFiles],
    primary: primaryNow,
    start,
    async settled(timeoutMs) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const master = await primaryNow();
        const online = master === undefined ? undefined : await ask(master.node.ip, 6379, (c) => c.info('replication'));
        const replicaUp = online !== undefined && /role:master/.test(online) && /slave0:.*state=online/.test(online);
        const serving = await Promise.all([...gateways, ...workers].map(ready));
        if (replicaUp && serving.every(Boolean)) return true;
        await sleep(300);
      }
      return false;
    },
  };
}
