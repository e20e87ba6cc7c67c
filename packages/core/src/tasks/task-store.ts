import { isTerminalStatus, type Task, type TaskStatus } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import { cannotCancelTerminal, TaskgateError, taskExpired, taskLimitExceeded, taskNotFound } from '../errors.js';
import { grantTtl, resolveTaskLimits, type TaskLimits } from '../limits/task-limits.js';
import { Keys } from '../redis/keys.js';
import { pipelineValues } from '../redis/pipeline-replies.js';
import { RedisClock } from '../redis/redis-clock.js';
import { awaitReplicas } from '../redis/replication.js';
import { Scripts } from '../redis/script-replies.js';
import { TurnBatch } from '../redis/turn-batch.js';
import { isTaskIdShape, newTaskId } from './ids.js';
import { ListCursorCodec } from './list-cursor.js';
import {
  diagnosticMessage,
  type OwnedTaskRead,
  RECORD_AND_OUTCOME,
  RECORD_FIELDS,
  recordFromFields,
  recordFromValues,
  type StoredResult,
  type StoredTask,
  type TaskKind,
  type TaskRecord,
  type TaskRef,
  type TaskWire,
  toTask,
} from './task-record.js';
import { TaskSessionKeys } from './task-session-keys.js';
import type { TaskObserver, TaskStoreOptions } from './task-store-options.js';

export type { TaskObserver, TaskStoreOptions } from './task-store-options.js';

export interface CreateTaskInput {
  /** The authenticated principal, or the session id when auth is off. */
  readonly owner: string;
  /** `params.task.ttl` as the requestor sent it. */
  readonly requestedTtlMs?: number;
  readonly kind?: TaskKind;
  readonly tool?: string;
  readonly session?: string;
  readonly progressToken?: string | number;
  /** The protocol revision whose wire created the task, when it is not the session's 2025-11-25 one. */
  readonly wire?: TaskWire;
}

/** What a lifecycle transition did: the task after it, or why it was refused. */
export type TransitionResult =
  | { readonly ok: true; readonly task: TaskRecord }
  | { readonly ok: false; readonly reason: 'not_found' }
  | { readonly ok: false; readonly reason: 'terminal' | 'illegal'; readonly status: TaskStatus };

export interface TaskPage {
  readonly tasks: Task[];
  readonly nextCursor?: string;
}

/**
 * Task records in Redis with an atomic lifecycle: every change is one Lua script that refuses illegal moves,
 * never touches a terminal task, bumps the version and publishes every change a client can see on the task's
 * channel (cancellations also on the one channel workers listen to).
 * Client-facing methods take the caller's owner and treat other owners' tasks as missing (SEC-1).
 */
export class TaskStore {
  readonly keys: Keys;
  readonly limits: TaskLimits;
  readonly #redis: Redis;
  readonly #scripts: Scripts;
  readonly #cursors: ListCursorCodec;
  readonly #observer: TaskObserver;
  readonly #sessionKeys: TaskSessionKeys;
  readonly #batch: TurnBatch;
  /** Undefined with `clock: 'server'`: each script reads `TIME` itself. */
  readonly #clock: RedisClock | undefined;
  readonly #pod: string;

  constructor(options: TaskStoreOptions) {
    this.#observer = options.observer ?? {};
    this.#pod = (options.pod ?? '').replace(/\s+/g, '-');
    this.#redis = options.redis;
    this.keys = options.keys ?? new Keys();
    this.limits = resolveTaskLimits(options.limits);
    this.#scripts = new Scripts(options.redis);
    this.#sessionKeys = new TaskSessionKeys(options.redis, this.keys);
    this.#batch = new TurnBatch(options.redis);
    this.#clock = options.clock === 'server' ? undefined : new RedisClock(options.redis);
    this.#cursors = new ListCursorCodec(options.cursorSecret, this.limits.cursorTtlMs);
  }

  /** Creates a task in status `working` (CRT-4) with a granted ttl (TTL-1), or throws when the owner is at its limit. */
  async create(input: CreateTaskInput): Promise<StoredTask> {
    const ownerId = Keys.ownerId(input.owner);
    const tag = Keys.tagOf(ownerId);
    if (input.session !== undefined && Keys.slotTag(input.session) !== tag) {
      // A session lives in its owner's slot (its id carries the tag): anything else is a broker bug.
      throw new TaskgateError('INVALID_CONFIG', 'the session does not belong to the owner creating the task');
    }
    const ttl = grantTtl(this.limits, input.requestedTtlMs);
    const kind = input.kind ?? 'task';
    // Nothing derivable is stored: kind 'task' is the default, the session's feed and channel follow from its
    // digest (createTask-3.lua).
    const extra = {
      ...(kind !== 'task' && { kind }),
      ...(input.tool !== undefined && { tool: input.tool }),
      ...(input.session !== undefined && { session: Keys.digest(input.session) }),
      ...(input.progressToken !== undefined && { progressToken: JSON.stringify(input.progressToken) }),
      ...(input.wire !== undefined && { wire: input.wire }),
    };
    const taskId = newTaskId(tag);
    const reply = await this.#scripts.createTask(
      [this.keys.task(taskId), this.keys.ownerTasks(ownerId), this.keys.ownerActive(ownerId)],
      [
        taskId,
        ttl,
        this.limits.pollIntervalMs > 0 ? this.limits.pollIntervalMs : '',
        ownerId,
        this.limits.maxActivePerOwner,
        JSON.stringify(extra),
        kind === 'task' ? '1' : '0',
        this.#pod,
        // The time as this process follows the Redis clock: no `TIME` per task (RedisClock).
        await this.#now(),
      ],
    );
    if (reply.kind === 'limit') throw taskLimitExceeded(this.limits.maxActivePerOwner);
    this.#sessionKeys.remember(taskId, input.session === undefined ? undefined : Keys.digest(input.session));
    // The id was generated just now, so a record under it is this call's own: its script ran, the reply was
    // lost with the connection, and the client library sent the script again after reconnecting.
    const stored = reply.kind === 'created' ? this.#snapshot(reply.snapshot) : await this.#ownCreation(taskId, ownerId);
    const created: StoredTask = {
      ...stored,
      ownerId,
      ...(input.wire !== undefined && { wire: input.wire }),
      ...(input.progressToken !== undefined && { progressToken: input.progressToken }),
    };
    this.#tell(() => this.#observer.created?.(created));
    return created;
  }

  /** The caller's task (GET-1), or -32602 when it is unknown, expired or another owner's (ERR-1, SEC-1). */
  async get(owner: string, taskId: string): Promise<Task> {
    return toTask(await this.getOwned(owner, taskId));
  }

  /** Like `get`, with the broker-side fields. */
  async getOwned(owner: string, taskId: string): Promise<StoredTask> {
    return (await this.#owned(owner, taskId, RECORD_FIELDS)).task;
  }

  /** A task record by id with no owner check, for workers and the broker itself. */
  async read(taskId: string): Promise<StoredTask | undefined> {
    return this.#learn(recordFromValues(taskId, await this.#redis.hmget(this.keys.task(taskId), ...RECORD_FIELDS)));
  }

  /** Remembers a live task's session keys from its record (its next transition needs them). */
  #learn<T extends StoredTask | undefined>(task: T): T {
    if (task !== undefined && !isTerminalStatus(task.status)) this.#sessionKeys.remember(task.taskId, task.session);
    return task;
  }

  /**
   * The status of many tasks (one HGET each, all sent at once), for safety re-reads: `null` for a task that
   * does not exist (expired), `undefined` where its read failed. Not a pipeline: on a cluster the tasks of
   * many owners live in many slots, and a pipeline must stay in one.
   */
  async statuses(taskIds: readonly string[]): Promise<(TaskStatus | null | undefined)[]> {
    const replies = await Promise.allSettled(
      taskIds.map((taskId) => this.#redis.hget(this.keys.task(taskId), 'status')),
    );
    return replies.map((reply) => {
      if (reply.status === 'rejected') return undefined;
      return typeof reply.value === 'string' ? (reply.value as TaskStatus) : null;
    });
  }

  /** A task record and its stored outcome by id, with no owner check (the caller checks who may see it). */
  async readWithOutcome(taskId: string): Promise<{ task?: StoredTask; outcome?: StoredResult }> {
    const values = await this.#redis.hmget(this.keys.task(taskId), ...RECORD_AND_OUTCOME);
    const task = this.#learn(recordFromValues(taskId, values));
    const raw = values[RECORD_FIELDS.length];
    if (task === undefined) return {};
    return raw == null ? { task } : { task, outcome: JSON.parse(raw) as StoredResult };
  }

  /**
   * The caller's task, its stored outcome (absent until it finished) and whether its outbox had an entry, in one
   * HMGET. `batched`: read in one pipeline with the others of this event-loop turn (waiters woken together).
   */
  async outcome(owner: string, taskId: string, batched = false): Promise<OwnedTaskRead> {
    const { task, values } = await this.#owned(owner, taskId, RECORD_AND_OUTCOME, batched);
    const [raw, outbox] = values.slice(RECORD_FIELDS.length);
    const had = outbox != null ? { outbox: true as const } : {};
    return raw == null ? { task, ...had } : { task, outcome: JSON.parse(raw) as StoredResult, ...had };
  }

  /** The caller's task and the values of `fields` (RECORD_FIELDS first) in one HMGET, or -32602 as `getOwned`. */
  async #owned(
    owner: string,
    taskId: string,
    fields: readonly string[],
    batched = false,
  ): Promise<{ task: StoredTask; values: (string | null)[] }> {
    const ownerId = Keys.ownerId(owner);
    if (!isTaskIdShape(taskId)) throw taskNotFound();
    const key = this.keys.task(taskId);
    const values = await (batched
      ? this.#batch.hmget(Keys.tagOf(taskId), key, fields)
      : this.#redis.hmget(key, ...fields));
    const task = recordFromValues(taskId, values);
    if (task !== undefined && task.ownerId === ownerId) return { task: this.#learn(task), values };
    if (task === undefined) {
      const expiry = await this.#redis.zscore(this.keys.ownerTasks(ownerId), taskId);
      if (expiry !== null) throw taskExpired();
    }
    throw taskNotFound();
  }

  /**
   * One page of the caller's tasks (LST-1, LST-2) after `cursor`. Pages are at most `limits.pageSize` long,
   * never repeat a task, skip expired ones and carry `nextCursor` while more remain.
   */
  async list(owner: string, cursor?: string): Promise<TaskPage> {
    const ownerId = Keys.ownerId(owner);
    const after = cursor === undefined ? undefined : this.#cursors.decode(ownerId, cursor);
    const size = this.limits.pageSize;
    const indexKey = this.keys.ownerTasks(ownerId);
    const entries = await this.#scripts.listPage([indexKey], [size, after?.score ?? '', after?.id ?? '']);
    const ids = entries.slice(0, size).map((entry) => entry.id);
    const more = entries.length > size;

    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hmget(this.keys.task(id), ...RECORD_FIELDS);
    const replies = pipelineValues(await pipeline.exec(), ids.length);
    const tasks: Task[] = [];
    const gone: string[] = [];
    ids.forEach((id, i) => {
      const record = recordFromValues(id, replies[i] as (string | null)[]);
      if (record === undefined) gone.push(id);
      else if (record.ownerId === ownerId) tasks.push(toTask(record));
    });
    // Hashes that Redis expired a moment before the index entry: drop the stale entries.
    if (gone.length > 0) await this.#redis.zrem(indexKey, ...gone);

    if (!more) return { tasks };
    const last = entries[ids.length - 1];
    if (last === undefined) return { tasks };
    return { tasks, nextCursor: this.#cursors.encode(ownerId, { id: last.id, score: last.score }) };
  }

  /**
   * Cancels the caller's task (CNL-2): `cancelled` before this returns. A terminal task answers -32602 with
   * the spec's message (CNL-1); an unknown or foreign one answers like a missing one.
   */
  async cancel(owner: string, taskId: string, statusMessage = 'Cancelled by the requestor'): Promise<Task> {
    const ownerId = Keys.ownerId(owner);
    if (!isTaskIdShape(taskId)) throw taskNotFound();
    const result = await this.#finished(
      this.#transition('cancelTask', { taskId, ownerId }, [ownerId, statusMessage, this.keys.cancelledChannel()]),
    );
    if (result.ok) return toTask(result.task);
    if (result.reason === 'terminal') throw cannotCancelTerminal(result.status);
    // Missing or foreign: let `getOwned` tell an expired task from an unknown one.
    await this.getOwned(owner, taskId);
    throw taskNotFound();
  }

  /**
   * Removes a task that was never acknowledged (its writes did not reach the replicas in time): the record and
   * its entries in the owner's indexes go, so its id is unknown, as if the create had never run.
   */
  async discard(ref: TaskRef): Promise<void> {
    this.#sessionKeys.forget(ref.taskId);
    await this.#redis
      .multi()
      .del(this.keys.task(ref.taskId))
      .zrem(this.keys.ownerTasks(ref.ownerId), ref.taskId)
      .zrem(this.keys.ownerActive(ref.ownerId), ref.taskId)
      .exec();
  }

  /** Waits until the replicas the policy names hold the task's writes (`awaitReplicas`; throws if they do not). */
  confirmReplicated(taskId: string): Promise<void> {
    return awaitReplicas(this.#redis, [this.keys.task(taskId)]);
  }

  /** Cancels a task on the broker's own behalf (a dropped direct call, an expired job). */
  cancelAsBroker(ref: TaskRef, statusMessage: string): Promise<TransitionResult> {
    return this.#finished(this.#transition('cancelTask', ref, ['', statusMessage, this.keys.cancelledChannel()]));
  }

  /**
   * An execution of the task's tool begins (a worker took its job), written before the tool runs: refused
   * when the task is already terminal or gone (the job does nothing). The record's `attempt` then counts the
   * executions that began, which tells a crash from a job BullMQ handed out to nobody (see `startTask-4.lua`).
   * The time is the Redis clock as this process follows it (`RedisClock`): no `TIME` per task.
   */
  async start(ref: TaskRef, attempt: number): Promise<TransitionResult> {
    const result = await this.#transition('startTask', ref, [attempt], [await this.#now()]);
    if (result.ok) this.#tell(() => this.#observer.started?.(result.task, attempt));
    return result;
  }

  /** working → input_required (INP-1). */
  requireInput(ref: TaskRef, statusMessage?: string): Promise<TransitionResult> {
    return this.#transition('requireInput', ref, [statusMessage ?? '']);
  }

  /** input_required → working (INP-4). */
  resume(ref: TaskRef, statusMessage?: string): Promise<TransitionResult> {
    return this.#transition('resumeTask', ref, [statusMessage ?? '']);
  }

  /** Replaces the status message of a live task. */
  setStatusMessage(ref: TaskRef, statusMessage: string): Promise<TransitionResult> {
    return this.#transition('setStatusMessage', ref, [statusMessage]);
  }

  /**
   * Stores the exact outcome and moves the task to `completed`, or to `failed` for a JSON-RPC error or an
   * `isError` result (ERR-4). A task that is terminal already (cancelled, CNL-3) keeps its state. The time is
   * the Redis clock as this process follows it (`RedisClock`): when the tool's result was handed over.
   */
  async finish(ref: TaskRef, outcome: StoredResult, statusMessage?: string): Promise<TransitionResult> {
    const failed = 'error' in outcome || outcome.result.isError === true;
    const message = statusMessage ?? (failed ? diagnosticMessage(outcome) : '');
    const args = [failed ? 'failed' : 'completed', JSON.stringify(outcome), message];
    return this.#finished(this.#transition('finishTask', ref, args, [await this.#now()]));
  }

  /** The time a creation, start or finish carries: '' with `clock: 'server'` (the script reads `TIME`). */
  #now(): Promise<number | ''> | '' {
    return this.#clock === undefined ? '' : this.#clock.now();
  }

  async #finished(transition: Promise<TransitionResult>): Promise<TransitionResult> {
    const result = await transition;
    if (result.ok) this.#tell(() => this.#observer.finished?.(result.task));
    return result;
  }

  #tell(hook: () => void): void {
    try {
      hook();
    } catch {
      // Observers (metrics) must never break a transition that already happened.
    }
  }

  /** Runs a transition script; `after` follows the pod's name in ARGV (scripts that record a trail). */
  async #transition(
    name: 'startTask' | 'requireInput' | 'resumeTask' | 'setStatusMessage' | 'finishTask' | 'cancelTask',
    ref: TaskRef,
    args: (string | number)[],
    after: (string | number)[] = [],
  ): Promise<TransitionResult> {
    const { taskId } = ref;
    if (ref.session !== undefined) this.#sessionKeys.remember(taskId, ref.session ?? undefined);
    const reply = await this.#sessionKeys.run(taskId, (session) => {
      const keys = [this.keys.task(taskId), this.keys.taskChannel(taskId), ...session];
      // Finishing and cancelling also take the task off its owner's active set.
      if (name === 'finishTask' || name === 'cancelTask') keys.push(this.keys.ownerActive(ref.ownerId));
      // Those a trail records take the pod's name last (includes/trail.lua).
      const pod = name === 'startTask' || name === 'finishTask' || name === 'cancelTask' ? [this.#pod] : [];
      return this.#scripts.transition(name, keys, [taskId, ...args, ...pod, ...after]);
    });
    const ended = reply.kind === 'changed' && (name === 'finishTask' || name === 'cancelTask');
    if (ended || reply.kind === 'terminal' || reply.kind === 'not_found') this.#sessionKeys.forget(taskId);
    switch (reply.kind) {
      case 'changed':
        return { ok: true, task: this.#snapshot(reply.snapshot) };
      case 'not_found':
        return { ok: false, reason: 'not_found' };
      default:
        return { ok: false, reason: reply.kind, status: reply.status };
    }
  }

  /** The record of a task this call created, when its script's reply was lost and the script ran again. */
  async #ownCreation(taskId: string, ownerId: string): Promise<StoredTask> {
    const stored = await this.read(taskId);
    if (stored === undefined || stored.ownerId !== ownerId || stored.version !== 1) {
      throw new TaskgateError('TASK_ID_COLLISION', 'a freshly generated task id already exists');
    }
    return stored;
  }

  #snapshot(snapshot: string): StoredTask {
    const fields = JSON.parse(snapshot) as Record<string, string> & { taskId: string };
    return recordFromFields(fields.taskId, fields);
  }
}
