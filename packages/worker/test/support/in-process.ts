import type { RedisFixture } from '@taskgate/test-harness';
import { afterEach } from 'vitest';
import {
  type AnyToolDefinition,
  type CreateWorkerOptions,
  createWorker,
  type TaskgateWorker,
} from '../../src/index.js';
import { TestGateway } from './gateway.js';

/**
 * In-process workers and gateways for one test file; everything opened in a test is closed after it.
 * Workers use short BullMQ timings so that tests never wait on defaults.
 */
export function useWorkers(redis: RedisFixture) {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    // Workers first (they may still be finishing jobs), then the gateways' queues.
    const items = open.splice(0).reverse();
    for (const item of items) await item.close();
  });
  return {
    async worker(
      tools: readonly AnyToolDefinition[],
      options: Partial<CreateWorkerOptions> = {},
    ): Promise<TaskgateWorker> {
      const worker = createWorker({
        redis: redis.url,
        prefix: redis.prefix,
        tools,
        lockDurationMs: 5000,
        stalledIntervalMs: 5000,
        statusCheckMs: 500,
        abortGraceMs: 1000,
        drainTimeoutMs: 2000,
        ...options,
      });
      open.push({ close: () => worker.close({ deadlineMs: 1000 }) });
      await worker.ready;
      return worker;
    },
    gateway(options: ConstructorParameters<typeof TestGateway>[1] = {}): TestGateway {
      const gateway = new TestGateway(redis, options);
      open.unshift({ close: () => gateway.close() });
      return gateway;
    },
  };
}
