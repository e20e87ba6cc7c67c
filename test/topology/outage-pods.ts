import { fileURLToPath } from 'node:url';
import {
  type ForkedProcess,
  forkNode,
  freePort,
  type PersistentRedis,
  startPersistentRedis,
  uniquePrefix,
} from '@taskgate/test-harness';
import { forkGateway, waitForOutput } from '../gateway/fixtures/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** A Redis that can die and come back (AOF, fsync always), with a `taskgate` gateway and worker on it. */
export interface Pods {
  readonly redis: PersistentRedis;
  /** TASKGATE_KEY_PREFIX of both processes. */
  readonly prefix: string;
  readonly url: string;
  readonly ready: string;
  readonly worker: ForkedProcess;
  readonly gateway: ForkedProcess;
}

/** Starts them; the gateway's Redis commands time out after `commandTimeoutMs`. */
export async function startPods(commandTimeoutMs: number): Promise<Pods> {
  const redis = await startPersistentRedis();
  const prefix = uniquePrefix('outage');
  const env = {
    REDIS_URL: redis.url,
    TASKGATE_KEY_PREFIX: prefix,
    TASKGATE_CURSOR_SECRET: 'outage-cursor-secret-0123456789',
    TASKGATE_REDIS_COMMAND_TIMEOUT_MS: String(commandTimeoutMs),
    TASKGATE_METRICS_PORT: String(await freePort()),
  };
  const worker = forkNode(`${root}packages/cli/src/run.ts`, ['worker', '--tools', '@taskgate/examples'], env);
  const { proc: gateway, url } = await forkGateway(env);
  await waitForOutput(worker, /worker ready/, 60_000);
  return { redis, prefix, url, ready: `${new URL(url).origin}/readyz`, worker, gateway };
}
