import { type RedisFixture, uniquePrefix } from '@taskgate/test-harness';
import { afterAll, afterEach } from 'vitest';
import { TestGateway } from './gateway.js';
import { startWorkerProcess, type WorkerProcess } from './worker-process.js';

/**
 * Forked worker processes for one test file. They share one key prefix (fixed for the file, since a process
 * is configured once) and are killed after the file; gateways are per test.
 */
export function useWorkerProcesses(redis: RedisFixture) {
  const prefix = uniquePrefix('w');
  const processes: WorkerProcess[] = [];
  const gateways: TestGateway[] = [];
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
  });
  afterAll(async () => {
    await Promise.all(processes.map((worker) => worker.process.stop('SIGKILL')));
  });
  return {
    prefix,
    /** Forks a worker process on this file's prefix; `env` adds settings (LOCK_MS, DRAIN_MS, ...). */
    async start(env: Record<string, string> = {}): Promise<WorkerProcess> {
      const worker = await startWorkerProcess({ REDIS_URL: redis.url, TG_PREFIX: prefix, ...env });
      processes.push(worker);
      return worker;
    },
    gateway(): TestGateway {
      const gateway = new TestGateway(redis, { prefix });
      gateways.push(gateway);
      return gateway;
    },
  };
}
