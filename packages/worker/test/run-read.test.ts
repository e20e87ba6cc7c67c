import { EventBus, Keys, noopLogger as noop, type ReadJobData, type ReadRequest, TaskStore } from '@taskgate/core';
import { useRedis } from '@taskgate/test-harness';
import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePrompt, defineResource } from '../src/index.js';
import { type OfferingSet, runRead } from '../src/run-read.js';
import { TaskWatch } from '../src/task-watch.js';

describe('runRead', () => {
  const redis = useRedis();

  const setup = () => {
    const connection = redis.connect();
    const keys = new Keys(redis.prefix);
    const store = new TaskStore({ redis: connection, keys, cursorSecret: 'run-read-test-secret-0123456789' });
    const bus = new EventBus(connection, keys);
    const watch = new TaskWatch({ store, bus, intervalMs: 200, logger: noop });
    const announced: string[] = [];
    const offerings: OfferingSet = {
      resources: new Map([
        [
          'test://notes',
          defineResource({
            uri: 'test://notes',
            name: 'notes',
            read: async (ctx) => {
              await ctx.resourceUpdated('test://notes');
              return 'notes';
            },
          }),
        ],
      ]),
      templates: new Map(),
      prompts: new Map([
        ['hi', definePrompt({ name: 'hi', arguments: z.object({ who: z.string() }), get: ({ who }) => `Hi ${who}` })],
      ]),
    };
    const deps = {
      store,
      watch,
      logger: noop,
      offerings,
      announce: async (uri: string) => void announced.push(uri),
    };
    const job = async (read: ReadRequest, stalled = 0): Promise<{ job: Job<ReadJobData>; taskId: string }> => {
      const record = await store.create({ owner: 'owner', kind: 'direct' });
      const data: ReadJobData = { taskId: record.taskId, ownerId: record.ownerId, read };
      const fake = { data, attemptsMade: 0, stalledCounter: stalled, queueName: 'reads.test' };
      return { job: fake as unknown as Job<ReadJobData>, taskId: record.taskId };
    };
    const close = async () => {
      watch.close();
      await bus.close();
    };
    return { store, deps, job, announced, close };
  };

  it('stores the result of a read on its hidden record, and lets the handler announce updates', async () => {
    const { store, deps, job, announced, close } = setup();
    try {
      const { job: read, taskId } = await job({ method: 'resources/read', uri: 'test://notes' });
      await runRead(deps, read);
      expect(await store.outcome('owner', taskId)).toMatchObject({
        task: { status: 'completed' },
        outcome: { result: { contents: [{ uri: 'test://notes', mimeType: 'text/plain', text: 'notes' }] } },
      });
      expect(announced).toEqual(['test://notes']);
    } finally {
      await close();
    }
  });

  it('stores a JSON-RPC error for prompt arguments that do not fit, naming the argument', async () => {
    const { store, deps, job, close } = setup();
    try {
      const { job: read, taskId } = await job({ method: 'prompts/get', name: 'hi', arguments: {} });
      await runRead(deps, read);
      const { task, outcome } = await store.outcome('owner', taskId);
      expect(task.status).toBe('failed');
      expect(outcome).toEqual({
        error: { code: -32602, message: expect.stringMatching(/^Invalid arguments for prompt 'hi': who: /) },
      });
    } finally {
      await close();
    }
  });

  it('fails a read whose earlier run began and stalled (its worker crashed) instead of running it again', async () => {
    const { store, deps, job, announced, close } = setup();
    try {
      const { job: read, taskId } = await job({ method: 'resources/read', uri: 'test://notes' }, 1);
      await store.start({ taskId, ownerId: read.data.ownerId }, 1); // the start of the run that crashed
      await runRead(deps, read);
      expect(await store.outcome('owner', taskId)).toMatchObject({
        task: { status: 'failed' },
        outcome: { error: { code: -32603, message: expect.stringMatching(/stopped unexpectedly/) } },
      });
      expect(announced).toEqual([]);
    } finally {
      await close();
    }
  });

  it('serves a read whose job stalled before any run began (BullMQ handed it to no worker)', async () => {
    const { store, deps, job, close } = setup();
    try {
      const { job: read, taskId } = await job({ method: 'resources/read', uri: 'test://notes' }, 1);
      await runRead(deps, read);
      expect(await store.outcome('owner', taskId)).toMatchObject({
        task: { status: 'completed' },
        outcome: { result: { contents: [{ uri: 'test://notes', text: 'notes' }] } },
      });
    } finally {
      await close();
    }
  });

  it('does nothing for a read the gateway gave up on (cancelled) before it started', async () => {
    const { store, deps, job, announced, close } = setup();
    try {
      const { job: read, taskId } = await job({ method: 'resources/read', uri: 'test://notes' });
      await store.cancel('owner', taskId, 'No worker answered in time');
      await runRead(deps, read);
      expect(await store.outcome('owner', taskId)).toEqual({ task: expect.objectContaining({ status: 'cancelled' }) });
      expect(announced).toEqual([]);
    } finally {
      await close();
    }
  });
});
