import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, toCatalogEntry } from '../src/index.js';
import { until } from './support/gateway.js';
import { useWorkers } from './support/in-process.js';

describe('a tool told of the jobs skipped because their task ended first', () => {
  const redis = useRedis();
  const env = useWorkers(redis);

  it('calls onSkipped with the task id of each skipped job, never for a job it runs', async () => {
    const skipped: string[] = [];
    let runs = 0;
    const tool = Object.freeze({
      ...defineTool({
        name: 'handed_off',
        description: 'Hands its work elsewhere',
        inputSchema: z.object({}),
        taskSupport: 'required',
        handler: () => {
          runs += 1;
          return 'ran';
        },
      }),
      onSkipped: async (taskId: string) => {
        skipped.push(taskId);
        throw new Error('withdrawing failed');
      },
    });
    const gateway = env.gateway();
    const entry = toCatalogEntry(tool);
    const cancelled = await gateway.callWith(entry, {});
    await gateway.store.cancel('alice', cancelled);
    const gone = await gateway.callWith(entry, {});
    await gateway.redis.del(gateway.keys.task(gone));
    const live = await gateway.callWith(entry, {});
    await env.worker([tool]);
    expect((await gateway.waitForEnd(live)).status).toBe('completed');
    await until(async () => (skipped.length === 2 ? true : undefined), 5000, 'both skips');
    expect(skipped.sort()).toEqual([cancelled, gone].sort());
    expect(runs).toBe(1);
  });
});
