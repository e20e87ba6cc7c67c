import { EventBus, InputRequests, Keys, type OutboxMessage, TaskOutbox, TaskStore } from '@taskgate/core';
import { useRedis } from '@taskgate/test-harness';
import { afterEach, describe, expect, it } from 'vitest';
import { pendingRound } from '../src/methods/pending-inputs.js';
import { CURSOR_SECRET } from './support/stack.js';

describe('the pending input requests of a task, as a 2026-07-28 round sees them', () => {
  const redis = useRedis();
  const buses: EventBus[] = [];
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((bus) => bus.close()));
  });

  function services() {
    const connection = redis.connect();
    const keys = new Keys(redis.prefix);
    const bus = new EventBus(connection, keys);
    buses.push(bus);
    return {
      store: new TaskStore({ redis: connection, keys, cursorSecret: CURSOR_SECRET }),
      outbox: new TaskOutbox({ redis: connection, keys }),
      inputs: new InputRequests({ redis: connection, bus, keys }),
    };
  }

  /** Posts one elicitation as a worker does: its request record, then its outbox entry. */
  async function ask(
    s: ReturnType<typeof services>,
    task: { taskId: string; ownerId: string },
    key: string,
    together?: { id: string; of: number },
  ): Promise<string> {
    const requestId = await s.inputs.create(task.taskId, task.ownerId, 'elicitation/create', 60_000);
    const message: OutboxMessage = {
      type: 'request',
      requestId,
      method: 'elicitation/create',
      params: { message: `${key}?` },
      key,
      ...(together !== undefined && { together }),
    };
    await s.outbox.append(task.taskId, message);
    return requestId;
  }

  it('is complete once every request asked in the same turn is posted, answered ones included', async () => {
    const s = services();
    const task = await s.store.create({ owner: 'alice', kind: 'task', tool: 'three' });
    const turn = { id: '1', of: 3 };
    const name = await ask(s, task, 'name', turn);
    await ask(s, task, 'greeting', turn);
    expect(await pendingRound(s, task.taskId)).toEqual({
      inputs: {
        name: { method: 'elicitation/create', params: { message: 'name?' } },
        greeting: { method: 'elicitation/create', params: { message: 'greeting?' } },
      },
      complete: false,
    });
    await ask(s, task, 'roots', turn);
    const all = await pendingRound(s, task.taskId);
    expect(Object.keys(all.inputs)).toEqual(['name', 'greeting', 'roots']);
    expect(all.complete).toBe(true);
    // An answered request still counts as posted: the next round is complete with the two left.
    expect(await s.inputs.answer(name, task.ownerId, { result: { action: 'decline' } })).toBe('ok');
    const left = await pendingRound(s, task.taskId);
    expect(Object.keys(left.inputs)).toEqual(['greeting', 'roots']);
    expect(left.complete).toBe(true);
  });

  it('cannot tell for a request that does not say, and an incomplete turn outweighs it', async () => {
    const s = services();
    const task = await s.store.create({ owner: 'alice', kind: 'task', tool: 'older' });
    await ask(s, task, 'plain');
    expect((await pendingRound(s, task.taskId)).complete).toBeUndefined();
    await ask(s, task, 'first of two', { id: '7', of: 2 });
    expect((await pendingRound(s, task.taskId)).complete).toBe(false);
  });
});
