import { createRedisConnection, Keys, type Logger, TaskStore, taskRefOf } from '@taskgate/core';
import { type PersistentRedis, startPersistentRedis, waitFor } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { FinalFailures } from '../src/final-failures.js';

/** A logger that keeps each entry's message. */
function recordingLogger(): Logger & { readonly messages: string[] } {
  const messages: string[] = [];
  const log = (_fields: Readonly<Record<string, unknown>>, message: string): void => {
    messages.push(message);
  };
  const logger = { debug: log, info: log, warn: log, error: log, child: () => logger, messages };
  return logger;
}

/**
 * A task store and its final failures on a connection whose commands fail while Redis is away (the gateway's
 * kind), so each try fails at once; `close` gives up what is pending and drops the connection.
 */
function setup(server: PersistentRedis) {
  const redis = createRedisConnection(server.url, 'command', () => {});
  const logger = recordingLogger();
  const store = new TaskStore({ redis, keys: new Keys('final'), cursorSecret: 'final-failures-secret-0123456789' });
  const failures = new FinalFailures(store, logger);
  const close = (): void => {
    failures.close();
    redis.disconnect();
  };
  return { logger, store, failures, close };
}

const MESSAGE = 'The worker could not run the tool to completion';

// A job BullMQ failed for good while Redis did not answer (a failover): its task must still end, not stay
// `working` with no job left to end it.
describe('failing the task of a job failed for good', () => {
  it('fails the task once Redis answers again, trying again while it does not', async () => {
    await using server = await startPersistentRedis();
    const { logger, store, failures, close } = setup(server);
    try {
      const task = await store.create({ owner: 'owner-a', tool: 'report' });
      await server.kill();
      const failing = failures.fail(taskRefOf(task), 'Too many Cluster redirections');
      await waitFor(() => logger.messages.filter((m) => m === 'could not fail task yet').length >= 3, 'three tries');
      expect(failures.pending).toBe(1);

      await server.restart();
      await expect(failing).resolves.toBe('failed');
      expect(failures.pending).toBe(0);
      expect(logger.messages.at(-1)).toBe('job failed; task failed');
      const read = await store.outcome('owner-a', task.taskId);
      expect(read.task.status).toBe('failed');
      expect(read.task.statusMessage).toBe(`Tool failed: ${MESSAGE}`);
      expect(read.outcome).toEqual({ result: { content: [{ type: 'text', text: MESSAGE }], isError: true } });
    } finally {
      close();
    }
  });

  it('leaves a task that ended meanwhile as it is, and gives up when the worker closes', async () => {
    await using server = await startPersistentRedis();
    const { logger, store, failures, close } = setup(server);
    try {
      const done = await store.create({ owner: 'owner-a', tool: 'report' });
      await store.finish(taskRefOf(done), { result: { content: [{ type: 'text', text: 'ok' }] } });
      await expect(failures.fail(taskRefOf(done), 'lost')).resolves.toBe('ended');
      expect((await store.read(done.taskId))?.status).toBe('completed');
      expect(logger.messages).toEqual([]);

      const waiting = await store.create({ owner: 'owner-a', tool: 'report' });
      await server.kill();
      const failing = failures.fail(taskRefOf(waiting), 'lost');
      await waitFor(() => logger.messages.includes('could not fail task yet'), 'a failed try');
      failures.close();
      await expect(failing).resolves.toBe('given up');
      expect(failures.pending).toBe(0);
      expect(logger.messages.at(-1)).toBe('could not fail task: the worker closed');
      await server.restart();
      expect((await store.read(waiting.taskId))?.status).toBe('working');
    } finally {
      close();
    }
  });
});
