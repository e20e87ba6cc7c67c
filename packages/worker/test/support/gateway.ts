import {
  type CatalogEntry,
  Keys,
  type StoredResult,
  type StoredTask,
  type TaskLimits,
  TaskStore,
  ToolCatalog,
  type ToolJobData,
  ToolQueues,
} from '@taskgate/core';
import type { RedisFixture } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';

export interface CallOptions {
  readonly owner?: string;
  readonly client?: ToolJobData['client'];
  readonly principal?: string;
}

/** The gateway's half, played by the tests through the core APIs: create the task, enqueue its job. */
export class TestGateway {
  readonly keys: Keys;
  readonly redis: Redis;
  readonly store: TaskStore;
  readonly queues: ToolQueues;
  readonly catalog: ToolCatalog;

  constructor(fixture: RedisFixture, options: { prefix?: string; limits?: Partial<TaskLimits> } = {}) {
    this.keys = new Keys(options.prefix ?? fixture.prefix);
    this.redis = fixture.connect();
    this.store = new TaskStore({
      redis: this.redis,
      keys: this.keys,
      cursorSecret: 'test-cursor-secret-0123456789',
      ...(options.limits !== undefined && { limits: options.limits }),
    });
    this.queues = new ToolQueues({ connection: this.redis, keys: this.keys });
    this.catalog = new ToolCatalog({ redis: this.redis, keys: this.keys });
  }

  /** Creates a task for `tool` and enqueues its job as the catalog entry says (waits for the entry). */
  async call(tool: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<string> {
    const entry = await this.entry(tool);
    return await this.callWith(entry, args, options);
  }

  /** Like `call`, with an explicit catalog entry (no worker needs to be running). */
  async callWith(entry: CatalogEntry, args: Record<string, unknown>, options: CallOptions = {}): Promise<string> {
    const owner = options.owner ?? 'alice';
    const task = await this.store.create({ owner, tool: entry.tool.name });
    await this.queues.enqueue(
      {
        queue: entry.queue,
        attempts: entry.attempts,
        ...(entry.backoffMs !== undefined && { backoffMs: entry.backoffMs }),
      },
      {
        taskId: task.taskId,
        ownerId: Keys.ownerId(owner),
        tool: entry.tool.name,
        arguments: args,
        ...(options.client !== undefined && { client: options.client }),
        ...(options.principal !== undefined && { principal: options.principal }),
      },
    );
    return task.taskId;
  }

  async entry(tool: string, timeoutMs = 10_000): Promise<CatalogEntry> {
    const entry = await until(() => this.catalog.get(tool), timeoutMs, `catalog entry of ${tool}`);
    return entry;
  }

  read(taskId: string): Promise<StoredTask | undefined> {
    return this.store.read(taskId);
  }

  async outcome(taskId: string): Promise<StoredResult | undefined> {
    const raw = await this.redis.hget(this.keys.task(taskId), 'outcome');
    return raw === null ? undefined : (JSON.parse(raw) as StoredResult);
  }

  /** Waits until the task satisfies `check` (polling every 20 ms). */
  async waitFor(taskId: string, check: (task: StoredTask) => boolean, timeoutMs = 10_000): Promise<StoredTask> {
    return await until(
      async () => {
        const task = await this.read(taskId);
        return task !== undefined && check(task) ? task : undefined;
      },
      timeoutMs,
      `task ${taskId}`,
    );
  }

  /** Waits until the task is terminal. */
  waitForEnd(taskId: string, timeoutMs = 10_000): Promise<StoredTask> {
    return this.waitFor(taskId, (task) => ['completed', 'failed', 'cancelled'].includes(task.status), timeoutMs);
  }

  ownerId(owner = 'alice'): string {
    return Keys.ownerId(owner);
  }

  async close(): Promise<void> {
    await this.queues.close();
  }
}

/** Polls `probe` every 20 ms until it yields a value, or fails after `timeoutMs`. */
export async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
