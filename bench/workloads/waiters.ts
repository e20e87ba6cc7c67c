import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { Keys } from '@taskgate/core';
import { freePort } from '@taskgate/dev-redis';
import { clientsOfProcess, cpuMs, rssBytes, waitForQuiet } from '../lib/proc-stats.js';
import { answers200, type BenchProcess, type ProcessSet, waitForLog, waitUntil } from '../lib/processes.js';
import { profileFlags } from '../lib/profile.js';
import { callsDelta, commandCalls, topCounts, total } from '../lib/redis-stats.js';
import { seedTasks } from '../lib/seed.js';
import { connect } from '../systems/mcp-subject.js';
import type { TaskgateSystem } from '../systems/taskgate.js';

/** c. What 10,000 (or `waiters`) blocked tasks/result requests cost one gateway process. */
export interface WaitersResult {
  readonly waiters: number;
  readonly rssBeforeMb: number;
  readonly rssAfterMb: number;
  readonly rssGrowthMb: number;
  readonly perWaiterKb: number;
  /** The gateway process's Redis connections (CLIENT LIST matched by address), most seen. */
  readonly redisConnections: number;
  /** Channels and patterns its Redis connections were subscribed to with every waiter blocked. */
  readonly subscriptions: number;
  /** From the first request until every stream was open (response headers in). */
  readonly openMs: number;
  /** Share of a core the gateway used while every waiter was blocked and nothing happened. */
  readonly idleCpuShare: number;
  /** Redis commands per second the system ran meanwhile (safety re-reads, lease refreshes, heartbeats). */
  readonly idleCommandsPerSecond: number;
  /** The most frequent of them, per second. */
  readonly idleBreakdown: string;
  /** From the first task's finish (in Redis) until the last waiter got its result. */
  readonly wakeAllMs: number;
  /**
   * Per waiter, from its own task's terminal write (the record's `lastUpdatedAt`, set from Redis's clock by
   * the finishing script) until its response ended at the client (same machine, same clock): the slowest.
   */
  readonly wakeMaxMs: number;
  /** The same, median. */
  readonly wakeP50Ms: number;
  /** How long finishing all tasks (in Redis) took. */
  readonly finishAllMs: number;
  /** The gateway's CPU time (ms) from the finishes until every waiter had its response, per waiter. */
  readonly wakeCpuMsPerWaiter: number;
  /** Redis commands (commandstats, Lua-run included) per waiter from the finishes to the last response. */
  readonly wakeCommandsPerWaiter: number;
  /** The most frequent of them, per waiter. */
  readonly wakeBreakdown: string;
  /** Waiters that got the tool's result. */
  readonly delivered: number;
  /** Redis commands (commandstats, Lua-run included) per waiter while the streams were opened. */
  readonly commandsPerWaiter: number;
  /** The most frequent of them, per waiter. */
  readonly setupBreakdown: string;
  /** The floor: RSS growth of a bare express server holding as many open SSE requests (MB). */
  readonly floorRssGrowthMb: number;
}

const MB = 1024 * 1024;
const BATCH = 250;
const SETTLE_MS = 2000;
// One whole heartbeat period of the gateway (its default, 15 s): each stream's heartbeat work (lease
// refreshes) falls into the window once, whenever the streams opened, so the idle rows are a steady state.
const IDLE_WINDOW_MS = 15_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Waiter {
  /** Resolves when the response headers arrived (the stream is open). */
  readonly open: Promise<void>;
  /** Resolves with the whole body once the response ended. */
  readonly done: Promise<string>;
  /** When the response ended (unix ms, fractional), once it did. */
  endedAt?: number;
}

function openWaiter(url: string, agent: Agent, sessionId: string, taskId: string, id: number): Waiter {
  let opened: () => void = () => {};
  let failed: (error: Error) => void = () => {};
  const open = new Promise<void>((resolve, reject) => {
    opened = resolve;
    failed = reject;
  });
  const done = new Promise<string>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2025-11-25',
          'Mcp-Session-Id': sessionId,
        },
      },
      (res) => {
        if (res.statusCode !== 200) failed(new Error(`tasks/result answered HTTP ${res.statusCode}`));
        opened();
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve(body));
        res.on('error', reject);
      },
    );
    req.on('error', (error) => {
      failed(error);
      reject(error);
    });
    req.end(JSON.stringify({ jsonrpc: '2.0', id, method: 'tasks/result', params: { taskId } }));
  });
  const waiter: Waiter = { open, done };
  done.then(
    () => {
      waiter.endedAt = performance.timeOrigin + performance.now();
    },
    () => {},
  );
  return waiter;
}

/**
 * Whose tasks the waiters wait for: a session of the SDK client, which holds the session's GET stream open,
 * or one opened over raw HTTP without a GET stream. In both, a tasks/result that waits longer than
 * `resultStreamAfterMs` gets a quiet stream, which stores nothing; the session's GET stream reads its feed.
 */
export type WaiterSession = 'sdk' | 'no-get';

/** A session opened over raw HTTP (initialize, then initialized), with no GET stream. */
async function rawSession(url: string): Promise<{ client: { close(): Promise<void> }; sessionId: string }> {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const params = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench-c', version: '1' } };
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params }),
  });
  await init.text();
  const sessionId = init.headers.get('mcp-session-id');
  if (sessionId === null) throw new Error(`${url} started no session`);
  const initialized = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await initialized.text();
  return { client: { close: async () => {} }, sessionId };
}

/**
 * A fresh gateway process on the system's Redis (so each variant of c starts from the same RSS); with
 * `profileDir` (`--profile`), it writes its CPU profile there as the others do.
 */
async function startGateway(
  system: TaskgateSystem,
  processes: ProcessSet,
  root: string,
  name: string,
  profileDir: string | undefined,
): Promise<{ gateway: BenchProcess; url: string }> {
  const port = await freePort();
  const gateway = processes.spawnNode(
    name,
    `${root}bench/fixtures/gateway-main.ts`,
    [],
    {
      REDIS_URL: system.redisServer.url,
      TASKGATE_KEY_PREFIX: system.keys.prefix,
      TASKGATE_CURSOR_SECRET: system.cursorSecret,
      LOG_LEVEL: 'info',
      PORT: String(port),
    },
    profileFlags(profileDir, name),
  );
  await waitUntil(`${name} /readyz`, () => answers200(`http://127.0.0.1:${port}/readyz`), {
    proc: gateway,
    timeoutMs: 60_000,
  });
  return { gateway, url: `http://127.0.0.1:${port}/mcp` };
}

/**
 * Seeds `count` tasks that never finish by themselves, opens one blocked `tasks/result` per task on gateway 0
 * (`session` 'sdk'), or on a fresh gateway ('no-get') — raw HTTP, one connection each, as 10,000 separate
 * clients would — and measures that gateway's RSS and Redis connections with all of them waiting. Then
 * finishes every task in Redis, from a process of its own, and times, per waiter, from its task's terminal
 * write until its response ended (which also proves they were really waiting).
 */
export async function runWaiters(
  system: TaskgateSystem,
  count: number,
  processes: ProcessSet,
  root: string,
  session: WaiterSession = 'sdk',
  profileDir?: string,
): Promise<WaitersResult> {
  const on =
    session === 'sdk' ? undefined : await startGateway(system, processes, root, 'c-gateway-no-get', profileDir);
  const gateway = on?.gateway ?? (system.gateways[0] as BenchProcess);
  const url = on?.url ?? (system.gatewayUrls[0] as string);
  const { client, sessionId } = session === 'sdk' ? await connect(url) : await rawSession(url);
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  try {
    const ids = await seedTasks(system.redisServer.url, system.keys.prefix, {
      owner: sessionId,
      count,
      collectIds: true,
    });
    const connectionsOf = async (): Promise<{ count: number; subs: number }> => {
      const clients = await clientsOfProcess(system.redis, gateway.pid, system.redisServer.port);
      const subs = clients.reduce((sum, c) => sum + Number(c.sub ?? 0) + Number(c.psub ?? 0), 0);
      return { count: clients.length, subs };
    };
    await waitForQuiet(gateway.pid);
    const before = { rss: rssBytes(gateway.pid), connections: await connectionsOf() };

    const calls0 = await commandCalls(system.redis);
    const started = performance.now();
    const waiters: Waiter[] = [];
    for (let i = 0; i < ids.length; i += BATCH) {
      const batch = ids.slice(i, i + BATCH).map((taskId, j) => openWaiter(url, agent, sessionId, taskId, i + j));
      waiters.push(...batch);
      await Promise.all(batch.map((waiter) => waiter.open));
    }
    const openMs = performance.now() - started;
    const during = await connectionsOf();
    const setup = callsDelta(calls0, await commandCalls(system.redis));
    // Let the last waits finish setting up, then measure what idle waiters cost: memory, CPU, Redis traffic.
    await sleep(SETTLE_MS);
    const rssAfter = rssBytes(gateway.pid);
    const idleCalls0 = await commandCalls(system.redis);
    const idleCpu0 = cpuMs(gateway.pid);
    const idleStart = performance.now();
    await sleep(IDLE_WINDOW_MS);
    const idleMs = performance.now() - idleStart;
    const idleCpuShare = (cpuMs(gateway.pid) - idleCpu0) / idleMs;
    const idleCalls = callsDelta(idleCalls0, await commandCalls(system.redis));
    const idleCommandsPerSecond = (total(idleCalls) / idleMs) * 1000;
    const idleBreakdown = topCounts(idleCalls, 10, idleMs / 1000);
    const atRest = await connectionsOf();

    // The finisher is a process of its own (bench/fixtures/finish-tasks.ts), started and connected before.
    const idsFile = join(processes.logDir, `${session}-task-ids.json`);
    writeFileSync(idsFile, JSON.stringify(ids));
    const finisher = processes.spawnNode(`c-finisher-${session}`, `${root}bench/fixtures/finish-tasks.ts`, [], {
      REDIS_URL: system.redisServer.url,
      TASKGATE_KEY_PREFIX: system.keys.prefix,
      IDS_FILE: idsFile,
      OWNER_ID: Keys.ownerId(sessionId),
    });
    await waitForLog(finisher, /finisher ready/);
    await waitForQuiet(gateway.pid);
    const wakeCalls0 = await commandCalls(system.redis);
    const wakeCpu0 = cpuMs(gateway.pid);
    process.kill(finisher.pid, 'SIGUSR2');
    const bodies = await Promise.all(waiters.map((waiter) => waiter.done.catch(() => '')));
    const wakeCpuMs = cpuMs(gateway.pid) - wakeCpu0;
    const wakeCalls = callsDelta(wakeCalls0, await commandCalls(system.redis));
    await finisher.exited;
    const finished = /finished (\d+) from ([\d.]+) in ([\d.]+) ms/.exec(finisher.log());
    if (finished === null) throw new Error(`the finisher did not finish:\n${finisher.log().slice(-2000)}`);
    const firstFinishAt = Number(finished[2]);
    const finishAllMs = Number(finished[3]);
    const wakeAllMs = Math.max(...waiters.map((waiter) => waiter.endedAt ?? Number.NaN)) - firstFinishAt;
    // Each task's terminal write, as the finishing script stamped it (Redis's clock, milliseconds).
    const stamps = system.redis.pipeline();
    for (const taskId of ids) stamps.hget(system.keys.task(taskId), 'lastUpdatedAt');
    const finishedAt = ((await stamps.exec()) ?? []).map(([, value]) => Number(value));
    const delivered = bodies.filter((body) => body.includes('"text":"ok"')).length;
    const wakes = waiters
      .map((waiter, i) => (waiter.endedAt ?? Number.NaN) - (finishedAt[i] ?? Number.NaN))
      .filter((ms) => Number.isFinite(ms))
      .sort((a, b) => a - b);
    return {
      waiters: count,
      rssBeforeMb: before.rss / MB,
      rssAfterMb: rssAfter / MB,
      rssGrowthMb: (rssAfter - before.rss) / MB,
      perWaiterKb: (rssAfter - before.rss) / 1024 / count,
      redisConnections: Math.max(before.connections.count, during.count, atRest.count),
      subscriptions: Math.max(during.subs, atRest.subs),
      openMs,
      wakeAllMs,
      wakeMaxMs: wakes.at(-1) ?? Number.NaN,
      wakeP50Ms: wakes[Math.floor(wakes.length / 2)] ?? Number.NaN,
      finishAllMs,
      wakeCpuMsPerWaiter: wakeCpuMs / count,
      wakeCommandsPerWaiter: total(wakeCalls) / count,
      wakeBreakdown: topCounts(wakeCalls, 10, count),
      delivered,
      idleCpuShare,
      idleCommandsPerSecond,
      idleBreakdown,
      commandsPerWaiter: total(setup) / count,
      setupBreakdown: topCounts(setup, 10, count),
      floorRssGrowthMb: Number.NaN,
    };
  } finally {
    agent.destroy();
    await client.close().catch(() => {});
    await on?.gateway.stop();
  }
}

/**
 * The floor under c: RSS growth of bench/fixtures/sse-floor-server.ts (express, nothing else) holding `count`
 * open SSE responses, opened the same way (one connection each).
 */
export async function runSseFloor(processes: ProcessSet, root: string, count: number): Promise<number> {
  const port = await freePort();
  const proc = processes.spawnNode('sse-floor', `${root}bench/fixtures/sse-floor-server.ts`, [], {
    PORT: String(port),
  });
  await waitForLog(proc, /floor listening/);
  const url = `http://127.0.0.1:${port}/mcp`;
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  try {
    for (let i = 0; i < 50; i++) await openWaiter(url, agent, 'warm-up', 'warm-up', i).open;
    await waitForQuiet(proc.pid);
    const before = rssBytes(proc.pid);
    for (let i = 0; i < count; i += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, count - i) }, (_, j) =>
        openWaiter(url, agent, 'floor', 'floor', i + j),
      );
      await Promise.all(batch.map((waiter) => waiter.open));
    }
    await waitForQuiet(proc.pid);
    return (rssBytes(proc.pid) - before) / MB;
  } finally {
    agent.destroy();
    await proc.stop();
  }
}
