import { createHash } from 'node:crypto';
import { useRedis } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  BridgePositions,
  EventBus,
  EventLog,
  InputRequests,
  Keys,
  loadScriptSource,
  ResourceSubscriptions,
  SCRIPT_KEY_COUNTS,
  type ScriptName,
  SessionStore,
  TaskDelivery,
  TaskOutbox,
  ToolCatalog,
} from '../src/index.js';
import { keySlot } from './key-slot.js';
import { makeStore } from './support.js';

/** One script run as MONITOR saw it: its name, the KEYS it declared and the keys its commands touched. */
interface ScriptRun {
  readonly name: ScriptName;
  readonly declared: string[];
  readonly touched: string[];
}

/** The keys a command names, as the server itself finds them (COMMAND GETKEYS); none for keyless commands. */
async function keysOf(redis: Redis, args: string[]): Promise<string[]> {
  try {
    return (await redis.call('COMMAND', 'GETKEYS', ...args)) as string[];
  } catch {
    return []; // PUBLISH, TIME, ...: no key arguments
  }
}

/**
 * Records every command the server runs while `flow` runs (MONITOR), and returns taskgate's script runs with
 * the keys their commands touched, and the keys of every MULTI … EXEC block.
 */
async function record(redis: ReturnType<typeof useRedis>, flow: () => Promise<void>) {
  const shas = new Map<string, ScriptName>();
  for (const mode of ['classic', 'sharded'] as const) {
    for (const name of Object.keys(SCRIPT_KEY_COUNTS) as ScriptName[]) {
      shas.set(createHash('sha1').update(loadScriptSource(name, mode)).digest('hex'), name);
    }
  }
  const monitorConnection = redis.connect();
  const monitor = await monitorConnection.monitor();
  const lines: { source: string; args: string[] }[] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => lines.push({ source, args }));
  // MONITOR is live once its first command is seen.
  const probe = redis.connect();
  await expect
    .poll(async () => {
      await probe.ping();
      return lines.length > 0;
    })
    .toBe(true);
  lines.length = 0;
  await flow();
  const done = `${redis.prefix}:recorded`;
  await probe.get(done);
  await expect.poll(() => lines.some((line) => line.args[1] === done)).toBe(true);
  monitor.disconnect();

  const runs: ScriptRun[] = [];
  const multis: string[][] = [];
  // MONITOR logs an EVALSHA / EVAL, then the commands the script ran (scripts run atomically, so every `lua`
  // line up to the next client command is the script's).
  let pending: { name: ScriptName | undefined; declared: string[]; inner: string[][] } | undefined;
  const settle = async (): Promise<void> => {
    if (pending?.name !== undefined) {
      const touched: string[] = [];
      for (const call of pending.inner) touched.push(...(await keysOf(probe, call)));
      runs.push({ name: pending.name, declared: pending.declared, touched });
    }
    pending = undefined;
  };
  let multi: string[][] | undefined;
  for (const { source, args } of lines) {
    if (source === 'lua') {
      pending?.inner.push(args);
      continue;
    }
    await settle();
    const command = (args[0] ?? '').toLowerCase();
    if (command === 'evalsha' || command === 'eval') {
      const sha =
        command === 'eval'
          ? createHash('sha1')
              .update(args[1] ?? '')
              .digest('hex')
          : (args[1] ?? '');
      const count = Number(args[2]);
      pending = { name: shas.get(sha), declared: args.slice(3, 3 + count), inner: [] };
    } else if (command === 'multi') multi = [];
    else if (command === 'exec' && multi !== undefined) {
      const keys: string[] = [];
      for (const call of multi) keys.push(...(await keysOf(probe, call)));
      multis.push(keys);
      multi = undefined;
    } else if (multi !== undefined) multi.push(args);
  }
  await settle();
  return { runs, multis };
}

describe('Redis Cluster slots', () => {
  const redis = useRedis();

  it('computes CLUSTER KEYSLOT as Redis does', () => {
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('somekey')).toBe(11058);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    expect(keySlot('foo{}{bar}')).toBe(keySlot('foo{}{bar}'.slice(0)));
    expect(keySlot('{}x')).not.toBe(keySlot('x'));
  });

  it('every script declares every key it touches in KEYS, all of one slot; every MULTI stays in one slot', async () => {
    const conn = redis.connect();
    const keys = new Keys(redis.prefix);
    const store = makeStore(redis, {}, conn);
    const bus = new EventBus(conn, keys);
    const sessions = new SessionStore({ redis: conn, keys, idleTtlMs: 60_000, maxPerPrincipal: 10 });
    const log = new EventLog({ redis: conn, keys, retentionMs: 60_000 });
    const delivery = new TaskDelivery({ redis: conn, keys });
    const outbox = new TaskOutbox({ redis: conn, keys });
    const inputs = new InputRequests({ redis: conn, bus, keys });
    const subscriptions = new ResourceSubscriptions({ redis: conn, keys, idleTtlMs: 60_000 });
    const catalog = new ToolCatalog({ redis: conn, keys });
    const positions = new BridgePositions({ redis: conn, keys });

    const { runs, multis } = await record(redis, async () => {
      // An authenticated owner's session and tasks, and an unauthenticated session owning its own tasks.
      for (const principal of ['alice', undefined]) {
        const session = await sessions.create({
          ...(principal !== undefined && { principal }),
          protocolVersion: '2025-11-25',
          clientCapabilities: {},
        });
        const owner = principal ?? session.sessionId;
        const task = await store.create({ owner, session: session.sessionId, tool: 'echo' });
        const plain = await store.create({ owner, tool: 'echo' });
        const ref = { taskId: task.taskId, ownerId: task.ownerId };
        await store.start(ref, 1);
        await store.setStatusMessage(ref, 'busy');
        await store.requireInput(ref, 'question');
        const requestId = await inputs.create(task.taskId, task.ownerId, 'elicitation/create', 60_000);
        await inputs.answer(requestId, task.ownerId, { result: { action: 'accept' } });
        await store.resume(ref, 'answered');
        const getStream = EventLog.newStreamId(session.sessionId);
        const resultStream = EventLog.newStreamId(session.sessionId);
        await sessions.claimStream(session.sessionId, getStream, 10_000, session.principalId);
        await sessions.get(session.sessionId, principal);
        await log.create(
          { streamId: getStream, kind: 'session', session: Keys.digest(session.sessionId) },
          'g',
          10_000,
        );
        await log.append(getStream, 'g', '');
        await log.keepAlive(getStream, 'g', 10_000);
        await log.create(
          {
            streamId: resultStream,
            kind: 'result',
            session: Keys.digest(session.sessionId),
            taskId: task.taskId,
            rpcId: 1,
          },
          'r',
          10_000,
        );
        await log.takeConnection(resultStream, 'r', 10_000);
        const entry = (await outbox.append(task.taskId, { type: 'progress', progress: 1 })) as string;
        await log.relay(getStream, 'g', {
          taskId: task.taskId,
          mode: 'fallback',
          entryId: entry,
          data: '{}',
          expiresAt: Date.now() + 60_000,
        });
        await delivery.claim(task.taskId, resultStream, 'r', 10_000);
        await delivery.refresh(task.taskId, resultStream, 'r', 10_000);
        await delivery.release(task.taskId, resultStream, 'r');
        await delivery.claim(task.taskId, resultStream, 'r', 10_000);
        await log.finish(resultStream, 'r', task.taskId, '{}', { done: '1' });
        await outbox.append(plain.taskId, { type: 'log', level: 'info', data: 'x' });
        await subscriptions.subscribe(session.sessionId, 'test://a');
        await subscriptions.unsubscribe(session.sessionId, 'test://a');
        await store.list(owner);
        await store.finish(ref, { result: { content: [] } });
        await store.cancel(owner, plain.taskId);
        await sessions.releaseStream(session.sessionId, getStream);
        await sessions.end(session.sessionId, session.principalId);
        // A principal's sessions are indexed by a script (the limit per principal).
        await sessions.create({
          ...(principal !== undefined && { principal }),
          protocolVersion: '2025-11-25',
          clientCapabilities: {},
        });
      }
      const stream = { connection: 'legacy', queue: 'bull:reports' };
      await positions.hold(stream, 'bridge-1', 5_000);
      await positions.advance(stream, 'bridge-1', 5_000, '1-1');
      await positions.release(stream, 'bridge-1');
      await catalog.register([
        { tool: { name: 'echo', inputSchema: { type: 'object' } }, queue: 'tool.echo', attempts: 1 } as never,
      ]);
    });
    await bus.close();

    // Every script ran, so none escapes the check.
    expect(new Set(runs.map((run) => run.name))).toEqual(new Set(Object.keys(SCRIPT_KEY_COUNTS)));
    for (const run of runs) {
      const slots = new Set(run.declared.map(keySlot));
      expect(slots.size, `${run.name}: KEYS ${run.declared.join(' ')} span ${slots.size} slots`).toBe(1);
      const undeclared = run.touched.filter((key) => !run.declared.includes(key));
      expect(undeclared, `${run.name} touches keys it did not declare`).toEqual([]);
    }
    expect(multis.length).toBeGreaterThan(0);
    for (const block of multis) {
      expect(new Set(block.map(keySlot)).size, `MULTI over ${block.join(' ')}`).toBeLessThanOrEqual(1);
    }
  });
});
