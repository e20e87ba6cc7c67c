import { Keys, TaskStore } from '@taskgate/core';
import { rawCall, rawInitialize, sleepMs, useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { CURSOR_SECRET, useStacks } from './support/stack.js';

describe('tasks/get and tasks/result read the task together with the session', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('[GET-1][RES-1][SEC-1] sends the task read before the session read is answered, and still answers only its owner', async () => {
    const stack = await start({ tools: false });
    const alice = await rawInitialize(stack.url);
    const bob = await rawInitialize(stack.url);
    const store = new TaskStore({ redis: stack.redis, keys: stack.keys, cursorSecret: CURSOR_SECRET });
    const task = await store.create({ owner: alice, kind: 'task', tool: 'idle' });
    const outcome = { result: { content: [{ type: 'text', text: 'done' }] } };
    await store.finish({ taskId: task.taskId, ownerId: task.ownerId }, outcome);

    const monitor = await redis.connect().monitor();
    const commands: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0] === 'hmget' || args[0] === 'hgetall') commands.push(`${args[0]} ${args[1]}`);
    });
    await sleepMs(50);
    const got = await rawCall(stack.url, alice, 'tasks/get', { taskId: task.taskId });
    const result = await rawCall(stack.url, alice, 'tasks/result', { taskId: task.taskId });
    await sleepMs(50);
    monitor.disconnect();

    expect(got.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { taskId: task.taskId, status: 'completed' } });
    expect(result.json()).toMatchObject({ id: 1, result: { content: [{ type: 'text', text: 'done' }] } });
    // Each request: the task's HMGET leaves first, then the session's HGETALL, on one connection (one round trip).
    const taskKey = `hmget ${stack.keys.task(task.taskId)}`;
    const sessionKey = `hgetall ${stack.keys.session(alice)}`;
    expect(commands).toEqual([taskKey, sessionKey, taskKey, sessionKey]);

    // Another session's caller (auth off: the owner is the session) learns nothing; an unknown session gets 404.
    for (const method of ['tasks/get', 'tasks/result']) {
      expect((await rawCall(stack.url, bob, method, { taskId: task.taskId })).json()).toMatchObject({
        error: { code: -32602 },
      });
      const unknown = await rawCall(stack.url, `${alice}x`, method, { taskId: task.taskId });
      expect(unknown.status).toBe(404);
    }
    expect(Keys.ownerId(alice)).toBe(task.ownerId);
  });
});
