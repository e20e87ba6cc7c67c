import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { Keys, TaskStore, TaskTrail } from '../src/index.js';
import { CURSOR_SECRET } from './support.js';

describe('TaskTrail', () => {
  const redis = useRedis();
  const keys = () => new Keys(redis.prefix);
  const store = (pod?: string) =>
    new TaskStore({
      redis: redis.connect(),
      keys: keys(),
      cursorSecret: CURSOR_SECRET,
      ...(pod !== undefined && { pod }),
    });

  it('records the pod of each creation, attempt and finish in the task hash, with no key of its own', async () => {
    const gateway = store('gateway-a');
    const worker = store('worker-b');
    const task = await gateway.create({ owner: 'alice', tool: 'sleep' });
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    expect((await worker.start(ref, 1)).ok).toBe(true);
    expect((await store('worker-c').start(ref, 2)).ok).toBe(true);
    expect((await worker.finish(ref, { result: { content: [] } })).ok).toBe(true);

    const trail = await new TaskTrail(redis.connect(), keys()).read(task.taskId);
    expect(trail.map(({ event, pod, attempt, status }) => [event, pod, attempt, status])).toEqual([
      ['created', 'gateway-a', undefined, undefined],
      ['started', 'worker-b', 1, undefined],
      ['started', 'worker-c', 2, undefined],
      ['finished', 'worker-b', undefined, 'completed'],
    ]);
    const record = await worker.read(task.taskId);
    expect(trail[0]?.at).toBe(record?.createdAt);
    expect(trail[3]?.at).toBe(record?.lastUpdatedAt);
    const conn = redis.connect();
    expect(await conn.exists(keys().taskTrail(task.taskId))).toBe(0);
    // Short fields: the hash of a finished task stays a listpack.
    expect(await conn.object('ENCODING', keys().task(task.taskId))).toBe('listpack');
  });

  it('names the cancelling pod, and keeps no trail for records without a tool or stores without a pod', async () => {
    const withTool = await store('gateway-a').create({ owner: 'alice', tool: 'sleep' });
    await store('gateway-b').cancel('alice', withTool.taskId);
    const noTool = await store('gateway-a').create({ owner: 'alice' });
    await store('gateway-a').cancel('alice', noTool.taskId);
    const noPod = await store().create({ owner: 'alice', tool: 'sleep' });
    await store().cancel('alice', noPod.taskId);

    const trail = new TaskTrail(redis.connect(), keys());
    expect((await trail.read(withTool.taskId)).map(({ event, pod, status }) => [event, pod, status])).toEqual([
      ['created', 'gateway-a', undefined],
      ['finished', 'gateway-b', 'cancelled'],
    ]);
    expect(await trail.read(noTool.taskId)).toEqual([]);
    expect(await trail.read(noPod.taskId)).toEqual([]);
  });

  it('still reads the trail stream that earlier versions wrote beside the task', async () => {
    const task = await store().create({ owner: 'alice', tool: 'sleep' });
    const conn = redis.connect();
    await conn.xadd(keys().taskTrail(task.taskId), '*', 'e', 'created', 'pod', 'old-pod');
    await conn.xadd(keys().taskTrail(task.taskId), '*', 'e', 'started', 'pod', 'old-pod', 'attempt', '1');
    const trail = await new TaskTrail(conn, keys()).read(task.taskId);
    expect(trail.map(({ event, pod, attempt }) => [event, pod, attempt])).toEqual([
      ['created', 'old-pod', undefined],
      ['started', 'old-pod', 1],
    ]);
  });
});
