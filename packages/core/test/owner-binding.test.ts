import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { Keys, type StoredResult } from '../src/index.js';
import { newTaskId } from '../src/tasks/ids.js';
import { makeStore, NOT_FOUND, rejection } from './support.js';

const terminalMessage = (status: string) => ({
  name: 'ProtocolError',
  code: -32602,
  message: `Cannot cancel task: already in terminal status '${status}'`,
});

describe('owner binding and unknown ids', () => {
  const redis = useRedis();

  it("[SEC-1] another owner's task answers get, cancel and outcome exactly like an unknown id", async () => {
    const store = makeStore(redis);
    const conn = redis.connect();
    const task = await store.create({ owner: 'alice', tool: 'secret-tool' });
    const unknown = newTaskId('tag0');
    const before = await conn.hgetall(store.keys.task(task.taskId));
    for (const id of [task.taskId, unknown]) {
      expect(await rejection(store.get('mallory', id))).toEqual(NOT_FOUND);
      expect(await rejection(store.getOwned('mallory', id))).toEqual(NOT_FOUND);
      expect(await rejection(store.cancel('mallory', id))).toEqual(NOT_FOUND);
      expect(await rejection(store.outcome('mallory', id))).toEqual(NOT_FOUND);
    }
    // The refused cancel changed nothing: same record, same version, still active.
    expect(await conn.hgetall(store.keys.task(task.taskId))).toEqual(before);
    expect(await conn.zscore(store.keys.ownerActive(task.ownerId), task.taskId)).not.toBeNull();
    expect((await store.get('alice', task.taskId)).status).toBe('working');
    // Also once the task is finished (an outcome exists now).
    await store.finish({ taskId: task.taskId, ownerId: task.ownerId }, { result: { content: [] } });
    expect(await rejection(store.outcome('mallory', task.taskId))).toEqual(NOT_FOUND);
    expect(await rejection(store.cancel('mallory', task.taskId))).toEqual(NOT_FOUND);
    expect((await store.outcome('alice', task.taskId)).outcome).toEqual({ result: { content: [] } });
  });

  it("[SEC-1] owners are told apart by the whole principal; list never shows another owner's tasks", async () => {
    const store = makeStore(redis);
    const owners = ['alice', 'Alice', 'alice ', 'bob', 'user:alice', ''];
    const byOwner = new Map<string, string[]>();
    for (const owner of owners) {
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push((await store.create({ owner })).taskId);
      byOwner.set(owner, ids);
    }
    for (const owner of owners) {
      const listed = (await store.list(owner)).tasks.map((t) => t.taskId).sort();
      expect(listed).toEqual([...byOwner.get(owner)!].sort());
      for (const other of owners.filter((o) => o !== owner)) {
        expect(await rejection(store.get(other, byOwner.get(owner)![0]!))).toEqual(NOT_FOUND);
      }
    }
    // Owner ids in keys are digests, never the principal itself.
    expect(store.keys.ownerTasks(Keys.ownerId('user:alice'))).not.toContain('user:alice');
  });

  it('[ERR-1] unknown, malformed and hostile task ids answer -32602 for get, cancel and outcome', async () => {
    const store = makeStore(redis);
    const conn = redis.connect();
    const real = await store.create({ owner: 'alice' });
    const ids = [
      newTaskId('tag0'),
      '',
      'x',
      'not a task id',
      `${real.taskId}:outbox`,
      `${real.taskId}*`,
      '*',
      '../../etc/passwd',
      'a'.repeat(65),
      'a'.repeat(10_000),
      real.taskId.slice(0, 23),
      `${real.taskId}A`,
      real.taskId.toLowerCase() === real.taskId ? real.taskId.toUpperCase() : real.taskId.toLowerCase(),
    ];
    for (const id of ids) {
      expect(await rejection(store.get('alice', id)), `get ${id.slice(0, 40)}`).toEqual(NOT_FOUND);
      expect(await rejection(store.cancel('alice', id)), `cancel ${id.slice(0, 40)}`).toEqual(NOT_FOUND);
      expect(await rejection(store.outcome('alice', id)), `outcome ${id.slice(0, 40)}`).toEqual(NOT_FOUND);
    }
    // None of that created a key, and the real task is untouched.
    const keys = await conn.keys(`${redis.prefix}:*`);
    expect(keys.filter((k) => !k.includes(real.taskId) && !k.includes(':owner:'))).toEqual([]);
    expect((await store.get('alice', real.taskId)).status).toBe('working');
  });

  it('[CNL-1] cancelling a completed, failed or cancelled task answers -32602 naming the status', async () => {
    const store = makeStore(redis);
    const outcomes: [StoredResult, string][] = [
      [{ result: { content: [{ type: 'text', text: 'ok' }] } }, 'completed'],
      [{ result: { content: [], isError: true } }, 'failed'],
      [{ error: { code: -32603, message: 'worker crashed' } }, 'failed'],
    ];
    for (const [outcome, status] of outcomes) {
      const task = await store.create({ owner: 'alice' });
      const done = await store.finish({ taskId: task.taskId, ownerId: task.ownerId }, outcome);
      expect(done.ok && done.task.status).toBe(status);
      expect(await rejection(store.cancel('alice', task.taskId))).toEqual(terminalMessage(status));
      const after = await store.outcome('alice', task.taskId);
      expect(after.task.status).toBe(status);
      expect(after.task.version).toBe(2);
      expect(after.outcome).toEqual(outcome);
    }
    const task = await store.create({ owner: 'alice' });
    expect((await store.cancel('alice', task.taskId)).status).toBe('cancelled');
    for (let i = 0; i < 2; i++) {
      expect(await rejection(store.cancel('alice', task.taskId))).toEqual(terminalMessage('cancelled'));
    }
    expect(await store.cancelAsBroker({ taskId: task.taskId, ownerId: task.ownerId }, 'again')).toEqual({
      ok: false,
      reason: 'terminal',
      status: 'cancelled',
    });
    expect((await store.get('alice', task.taskId)).statusMessage).toBe('Cancelled by the requestor');
  });

  it('[CNL-3] a finish after a cancel is refused and neither status nor outcome change', async () => {
    const store = makeStore(redis);
    const task = await store.create({ owner: 'alice' });
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    expect((await store.requireInput(ref, 'need a file')).ok).toBe(true);
    const cancelled = await store.cancel('alice', task.taskId, 'user gave up');
    expect(cancelled.status).toBe('cancelled');
    expect(await store.finish(ref, { result: { content: [] } })).toEqual({
      ok: false,
      reason: 'terminal',
      status: 'cancelled',
    });
    expect(await store.finish(ref, { error: { code: -1, message: 'x' } })).toEqual({
      ok: false,
      reason: 'terminal',
      status: 'cancelled',
    });
    const after = await store.outcome('alice', task.taskId);
    expect(after.outcome).toBeUndefined();
    expect(after.task).toMatchObject({ status: 'cancelled', statusMessage: 'user gave up', version: 3 });
  });
});
