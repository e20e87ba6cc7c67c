import type { RedisFixture } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { Keys, type TaskLimits, TaskStore } from '../src/index.js';

/** Cursor secret shared by the stores of one test (≥ 16 bytes). */
export const CURSOR_SECRET = 'core-test-cursor-secret-0123456789';

/** A task store on a new connection (or `connection`) under the current test's prefix. */
export function makeStore(
  redis: RedisFixture,
  limits: Partial<TaskLimits> = {},
  connection: Redis = redis.connect(),
): TaskStore {
  return new TaskStore({ redis: connection, keys: new Keys(redis.prefix), cursorSecret: CURSOR_SECRET, limits });
}

/** What a rejected store call looked like on the wire side: the error class name, code and message. */
export interface RejectionShape {
  readonly name: string;
  readonly code: unknown;
  readonly message: string;
  readonly data?: unknown;
}

/** The error a promise rejects with, reduced to its wire shape; fails when the promise resolves. */
export async function rejection(promise: Promise<unknown>): Promise<RejectionShape> {
  let value: unknown;
  try {
    value = await promise;
  } catch (error) {
    const e = error as { name: string; code: unknown; message: string; data?: unknown };
    return { name: e.name, code: e.code, message: e.message, ...(e.data !== undefined && { data: e.data }) };
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
}

/** -32602 'Failed to retrieve task: Task not found', as a ProtocolError. */
export const NOT_FOUND: RejectionShape = {
  name: 'ProtocolError',
  code: -32602,
  message: 'Failed to retrieve task: Task not found',
};

/** -32602 'Failed to retrieve task: Task has expired', as a ProtocolError. */
export const EXPIRED: RejectionShape = {
  name: 'ProtocolError',
  code: -32602,
  message: 'Failed to retrieve task: Task has expired',
};

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every few ms until it holds; throws after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

/** Compares strings by their bytes, the order Redis gives sorted-set members of equal score. */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Calls `onWrite` at each socket write of the connection (`_write` for one chunk, `_writev` for several). */
export function onSocketWrite(redis: Redis, onWrite: () => void): void {
  const stream = (redis as unknown as { stream: Record<string, (...args: unknown[]) => void> }).stream;
  for (const name of ['_write', '_writev'] as const) {
    const original = stream[name];
    if (typeof original !== 'function') continue;
    stream[name] = function (this: unknown, ...args: unknown[]) {
      onWrite();
      return original.apply(this, args);
    };
  }
}
