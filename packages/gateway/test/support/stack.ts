import { Keys } from '@taskgate/core';
import type { RedisFixture } from '@taskgate/test-harness';
import { TEST_TOOLS } from '@taskgate/test-harness/tools';
import { type AnyToolDefinition, type CreateWorkerOptions, createWorker, type TaskgateWorker } from '@taskgate/worker';
import type { Redis } from 'ioredis';
import { afterEach } from 'vitest';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/index.js';

export const CURSOR_SECRET = 'gateway-test-cursor-secret-0123456789';

/** A gateway (and usually a worker) on the current test's key prefix. */
export interface Stack {
  readonly gateway: Gateway;
  /** The MCP endpoint. */
  readonly url: string;
  readonly worker?: TaskgateWorker;
  readonly redis: Redis;
  readonly keys: Keys;
}

export interface StackOptions {
  readonly gateway?: Partial<GatewayOptions>;
  /** Tools of the in-process worker; `false` for no worker. */
  readonly tools?: readonly AnyToolDefinition[] | false;
  readonly worker?: Partial<CreateWorkerOptions>;
}

/** Starts stacks for a test file and closes each one after its test. */
export function useStacks(redis: RedisFixture): (options?: StackOptions) => Promise<Stack> {
  const open: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((close) => close()));
  });
  return async (options = {}) => {
    const connection = redis.connect();
    const gateway = createGateway({
      redis: connection,
      keyPrefix: redis.prefix,
      cursorSecret: CURSOR_SECRET,
      limits: { pollIntervalMs: 200 },
      drainTimeoutMs: 500,
      // Tests call faster than a client would; the rate-limit tests set their own limits.
      rateLimits: {},
      ...options.gateway,
    });
    const address = await gateway.listen(0, '127.0.0.1');
    const tools = options.tools ?? TEST_TOOLS;
    const worker =
      tools === false
        ? undefined
        : createWorker({ redis: redis.url, prefix: redis.prefix, tools, statusCheckMs: 500, ...options.worker });
    await worker?.ready;
    open.push(async () => {
      await worker?.close({ deadlineMs: 500 });
      await gateway.close();
    });
    return {
      gateway,
      url: address.url,
      ...(worker !== undefined && { worker }),
      redis: connection,
      keys: new Keys(redis.prefix),
    };
  };
}
