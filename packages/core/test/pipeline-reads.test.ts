import { useRedis } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { EventBus, InputRequests, Keys, type OutboxEntry, SessionStore, TaskDelivery } from '../src/index.js';
import { makeStore } from './support.js';

/** Replaces a key with a string: every read of it as a hash then fails with WRONGTYPE, as a lost read would. */
async function spoil(connection: Redis, key: string): Promise<void> {
  await connection.del(key);
  await connection.set(key, 'not a hash');
}

describe('reads of several keys in one pipeline', () => {
  const redis = useRedis();

  /** A task of alice's session waiting for the answer to one elicitation. */
  async function waitingTask() {
    const connection = redis.connect();
    const keys = new Keys(redis.prefix);
    const sessions = new SessionStore({ redis: connection, keys, idleTtlMs: 60_000, maxPerPrincipal: 0 });
    const session = await sessions.create({
      principal: 'alice',
      protocolVersion: '2025-11-25',
      clientCapabilities: {},
    });
    const store = makeStore(redis, {}, connection);
    const task = await store.create({ owner: 'alice', session: session.sessionId, tool: 'echo' });
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    await store.start(ref, 1);
    await store.requireInput(ref, 'question');
    const inputs = new InputRequests({ redis: connection, bus: new EventBus(connection, keys), keys });
    const requestId = await inputs.create(task.taskId, task.ownerId, 'elicitation/create', 60_000);
    const delivery = new TaskDelivery({ redis: connection, keys });
    return { connection, keys, sessionId: session.sessionId, ...ref, inputs, requestId, delivery };
  }

  it("fail when Redis fails a request's read, rather than calling the request answered", async () => {
    const { connection, keys, taskId, inputs, requestId } = await waitingTask();
    expect(await inputs.unanswered(taskId, [requestId])).toEqual([requestId]);
    await spoil(connection, keys.inputRequest(requestId));
    await expect(inputs.unanswered(taskId, [requestId])).rejects.toThrow(/WRONGTYPE/);
  });

  it('fail when Redis fails a read of the requests to send again, rather than sending none', async () => {
    const { connection, keys, taskId, requestId, delivery } = await waitingTask();
    const sent: OutboxEntry[] = [
      { id: '1-0', message: { type: 'request', requestId, method: 'elicitation/create', params: {} } },
    ];
    expect(await delivery.orphanedRequests(taskId, 'another-stream', sent)).toEqual(sent);
    await spoil(connection, keys.inputRequest(requestId));
    await expect(delivery.orphanedRequests(taskId, 'another-stream', sent)).rejects.toThrow(/WRONGTYPE/);
  });

  it("fail when Redis fails a read of a session's tasks, rather than reading a cursor of nothing", async () => {
    const { connection, keys, sessionId, taskId, ownerId, delivery } = await waitingTask();
    expect(await delivery.sessionTasks(ownerId, sessionId)).toEqual([
      { taskId, undelivered: false, carried: false, waiting: true },
    ]);
    await spoil(connection, keys.taskRelay(taskId));
    await expect(delivery.sessionTasks(ownerId, sessionId)).rejects.toThrow(/WRONGTYPE/);
  });
});
