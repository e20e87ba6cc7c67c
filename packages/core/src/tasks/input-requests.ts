import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { EventBus } from '../redis/event-bus.js';
import { Keys } from '../redis/keys.js';
import { pipelineValues } from '../redis/pipeline-replies.js';
import { Scripts } from '../redis/script-replies.js';

/** The requestor's answer to a server-to-client request: its JSON-RPC result, or its JSON-RPC error. */
export type InputAnswer =
  | { readonly result: Record<string, unknown> }
  | { readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } };

export interface InputRequestsOptions {
  readonly redis: Redis;
  readonly bus: EventBus;
  readonly keys?: Keys;
}

export interface WaitOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs: number;
}

/** Why waiting for an answer ended without one. */
export class InputWaitError extends Error {
  override readonly name = 'InputWaitError';
  /** Stable string code, for logs and tests. */
  readonly code: 'INPUT_WAIT_TIMEOUT' | 'INPUT_WAIT_ABORTED';

  constructor(readonly reason: 'timeout' | 'aborted') {
    super(reason === 'timeout' ? 'No answer arrived in time' : 'Waiting for an answer was aborted');
    this.code = reason === 'timeout' ? 'INPUT_WAIT_TIMEOUT' : 'INPUT_WAIT_ABORTED';
  }
}

/**
 * Server-to-client requests (elicitation, sampling) across processes: a worker registers a request and
 * waits; the requestor's answer may reach any gateway, which records it here; the worker wakes through
 * pub/sub, with a re-read after subscribing, after a reconnect and at intervals as safety nets.
 */
export class InputRequests {
  readonly #redis: Redis;
  readonly #bus: EventBus;
  readonly #keys: Keys;
  readonly #scripts: Scripts;

  constructor(options: InputRequestsOptions) {
    this.#redis = options.redis;
    this.#bus = options.bus;
    this.#keys = options.keys ?? new Keys();
    this.#scripts = new Scripts(options.redis);
  }

  /** Registers a pending request of a task; its id (≥128 random bits) is also the JSON-RPC id the client sees. */
  async create(taskId: string, ownerId: string, method: string, lifetimeMs: number): Promise<string> {
    const requestId = `in-${Keys.tagOf(taskId)}${randomBytes(16).toString('base64url')}`;
    const key = this.#keys.inputRequest(requestId);
    const replies = await this.#redis
      .multi()
      .hset(key, 'taskId', taskId, 'owner', ownerId, 'method', method)
      .pexpire(key, lifetimeMs)
      .exec();
    // A transaction Redis discarded, or one of its commands refused, must not hand out the id of a request
    // that does not exist (its answer would find nothing and the task would wait for it in vain).
    const refused =
      replies === null ? new Error('the transaction was discarded') : replies.find(([error]) => error)?.[0];
    if (refused) throw new Error(`The input request could not be registered: ${refused.message}`);
    return requestId;
  }

  /**
   * Keeps the task a client made of this request (its CreateTaskResult's `task`, CLT-1) with the request, so
   * the request's record says which client task holds the answer while it is polled.
   */
  async keepClientTask(requestId: string, clientTask: Record<string, unknown>): Promise<void> {
    await this.#redis.hset(this.#keys.inputRequest(requestId), 'clientTask', JSON.stringify(clientTask));
  }

  /** The client task kept with a request (`keepClientTask`), if any. */
  async clientTaskOf(requestId: string): Promise<Record<string, unknown> | undefined> {
    const raw = await this.#redis.hget(this.#keys.inputRequest(requestId), 'clientTask');
    return raw === null ? undefined : (JSON.parse(raw) as Record<string, unknown>);
  }

  /** The task a pending request belongs to, if the request exists and belongs to `ownerId`. */
  async taskOf(requestId: string, ownerId: string): Promise<string | undefined> {
    const [taskId, owner] = await this.#redis.hmget(this.#keys.inputRequest(requestId), 'taskId', 'owner');
    return owner === ownerId && taskId !== null ? taskId : undefined;
  }

  /**
   * Which of `requestIds` are requests of `taskId` still waiting for an answer (one pipeline, all in the
   * task's slot): what the 2026-07-28 wire shows as the task's `inputRequests`.
   */
  async unanswered(taskId: string, requestIds: readonly string[]): Promise<string[]> {
    if (requestIds.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const id of requestIds) pipeline.hmget(this.#keys.inputRequest(id), 'taskId', 'answer');
    const replies = pipelineValues(await pipeline.exec(), requestIds.length);
    return requestIds.filter((_id, i) => {
      const [taskOf, answer] = replies[i] as (string | null)[];
      return taskOf === taskId && answer === null;
    });
  }

  /**
   * Records an answer from the task owner's session. `not_found` covers unknown, expired and foreign
   * requests alike; `duplicate` means an answer was recorded before (the first one wins).
   */
  async answer(requestId: string, ownerId: string, answer: InputAnswer): Promise<'ok' | 'not_found' | 'duplicate'> {
    const reply = await this.#scripts.answerInput(
      [this.#keys.inputRequest(requestId), this.#keys.inputRequestChannel(requestId)],
      [ownerId, JSON.stringify(answer)],
    );
    if (reply.kind === 'recorded') return 'ok';
    return reply.kind === 'answered' ? 'duplicate' : 'not_found';
  }

  /** Waits for the answer to a request; rejects with InputWaitError on timeout or abort. */
  async waitForAnswer(requestId: string, options: WaitOptions): Promise<InputAnswer> {
    const key = this.#keys.inputRequest(requestId);
    return await new Promise<InputAnswer>((resolve, reject) => {
      let settled = false;
      const cleanups: (() => unknown)[] = [];
      const finish = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        for (const cleanup of cleanups) cleanup();
        outcome();
      };
      const accept = (raw: string | null): void => {
        if (raw !== null) finish(() => resolve(JSON.parse(raw) as InputAnswer));
      };
      const reread = (): void => {
        this.#redis.hget(key, 'answer').then(accept, () => {});
      };

      if (options.signal?.aborted) return finish(() => reject(new InputWaitError('aborted')));
      const onAbort = (): void => finish(() => reject(new InputWaitError('aborted')));
      options.signal?.addEventListener('abort', onAbort, { once: true });
      cleanups.push(() => options.signal?.removeEventListener('abort', onAbort));

      const timer = setTimeout(() => finish(() => reject(new InputWaitError('timeout'))), options.timeoutMs);
      const safetyNet = setInterval(reread, Math.min(5000, Math.max(250, options.timeoutMs / 4)));
      cleanups.push(
        () => clearTimeout(timer),
        () => clearInterval(safetyNet),
      );
      cleanups.push(this.#bus.onReconnect(reread));

      this.#bus.subscribe(this.#keys.inputRequestChannel(requestId), accept).then(
        (unsubscribe) => {
          if (settled) return void unsubscribe();
          cleanups.push(unsubscribe);
          reread(); // an answer recorded before the subscription was live
        },
        () => reread(),
      );
    });
  }
}
