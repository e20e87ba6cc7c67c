import { type InputAnswer, InputWaitError, type OutboxRequestMethod } from '@taskgate/core';
import { CreateTaskResultSchema, GetTaskResultSchema, isTerminalStatus, type Task } from '@taskgate/protocol';
import { ClientTaskError } from './errors.js';
import type { ClientTaskMode, ToolClient } from './tool-context.js';
import { describeZodIssues } from './zod-issues.js';

/** Whether the deployment lets tools run input requests as client tasks (`TASKGATE_CLIENT_TASKS`). */
export type ClientTasksSetting = 'auto' | 'off';

/** What running one input request as a client task needs from the tool's context. */
export interface ClientTaskPeer {
  /** Sends a request to the client through the task's outbox, answered within `timeoutMs`; resolves to its id. */
  ask(method: OutboxRequestMethod, params: Record<string, unknown>, timeoutMs: number): Promise<string>;
  /**
   * The answer to a request `ask` sent, within `timeoutMs`; `abortable`: given up when `signal` aborts, else
   * waited for whatever happens to the tool (a late answer that still needs a reply).
   */
  answer(requestId: string, timeoutMs: number, abortable: boolean): Promise<InputAnswer>;
  /** Sends a request whose answer nobody waits for (`tasks/cancel`). */
  post(method: OutboxRequestMethod, params: Record<string, unknown>): Promise<void>;
  /** Keeps the client's task with the input request in Redis. */
  keep(requestId: string, task: Task): Promise<void>;
  /** Shows the client task's status in the taskgate task's statusMessage. */
  show(message: string): Promise<void>;
  readonly signal: AbortSignal;
  /** The client declared `tasks.cancel`. */
  readonly cancellable: boolean;
  /** The shortest pause between two `tasks/get` (a client's shorter pollInterval is raised to it). */
  readonly minPollMs: number;
  /** How long the whole exchange may take, and the ttl the client's task is asked for. */
  readonly timeoutMs: number;
}

/** The capability a client declares to take `method` as a task (CLT-1). */
export function declaresClientTasks(client: ToolClient, method: 'elicitation/create' | 'sampling/createMessage') {
  const requests = client.capabilities.tasks?.requests;
  return method === 'elicitation/create'
    ? requests?.elicitation?.create !== undefined
    : requests?.sampling?.createMessage !== undefined;
}

/**
 * Whether an input request goes out as a client task: `true` demands it (the capability must be declared),
 * `false` refuses it, `auto` (the default) uses it where the client declared it and the deployment allows it.
 */
export function usesClientTask(
  mode: ClientTaskMode | undefined,
  declared: boolean,
  setting: ClientTasksSetting,
): boolean | 'undeclared' {
  if (mode === true) return declared ? true : 'undeclared';
  if (mode === false) return false;
  return declared && setting === 'auto';
}

/** Resolves after `ms`, or rejects with the abort reason when `signal` fires first. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * One input request as a client task (CLT-1): sent with `task: { ttl }`; the client's CreateTaskResult kept
 * with the request; its `tasks/get` polled at its pollInterval (raised to `minPollMs`), each poll a request
 * through whichever gateway holds the client's stream; once completed, its `tasks/result` is the answer.
 * `failed` or `cancelled` rejects with ClientTaskError; giving up (abort, timeout) cancels the client's task
 * where it declared `tasks.cancel`. A client that answers the request itself (no task) answers it.
 */
export async function runClientTask(
  peer: ClientTaskPeer,
  method: 'elicitation/create' | 'sampling/createMessage',
  params: Record<string, unknown>,
): Promise<InputAnswer> {
  const deadline = Date.now() + peer.timeoutMs;
  const requestId = await peer.ask(method, { ...params, task: { ttl: peer.timeoutMs } }, peer.timeoutMs);
  let createdAnswer: InputAnswer;
  try {
    createdAnswer = await peer.answer(requestId, peer.timeoutMs, true);
  } catch (error) {
    // Given up while the client's CreateTaskResult was on its way: the task it names is cancelled once it comes.
    if (peer.cancellable) void cancelWhenCreated(peer, requestId);
    throw error;
  }
  if ('error' in createdAnswer) return createdAnswer;
  const parsed = CreateTaskResultSchema.safeParse(createdAnswer.result);
  if (!parsed.success) return createdAnswer;
  let task: Task = parsed.data.task;
  await peer.keep(requestId, task);
  let shown = '';
  try {
    while (!isTerminalStatus(task.status)) {
      const message = `Waiting for the client's task (${task.status})${task.statusMessage ? `: ${task.statusMessage}` : ''}`;
      if (message !== shown) await peer.show(message);
      shown = message;
      await pause(Math.max(task.pollInterval ?? peer.minPollMs, peer.minPollMs), peer.signal);
      if (Date.now() >= deadline) throw new InputWaitError('timeout');
      const got = await poll(peer, task, deadline);
      if (got === undefined) continue;
      if ('error' in got) return got;
      const next = GetTaskResultSchema.safeParse(got.result);
      if (!next.success)
        throw new Error(`The client's answer to tasks/get is not valid: ${describeZodIssues(next.error)}`);
      const { _meta: _ignored, ...fields } = next.data;
      task = fields;
      await peer.keep(requestId, task);
    }
    if (task.status !== 'completed') {
      throw new ClientTaskError(task.status === 'failed' ? 'failed' : 'cancelled', task.statusMessage);
    }
    return await request(peer, 'tasks/result', { taskId: task.taskId }, remaining(deadline));
  } catch (error) {
    if (!isTerminalStatus(task.status) && peer.cancellable) {
      await peer.post('tasks/cancel', { taskId: task.taskId }).catch(() => {});
    }
    throw error;
  }
}

/** How long a client task's creation given up (the tool aborted, or its time ran out) still waits for the answer. */
const LATE_CREATE_MS = 10_000;

/**
 * The client's answer to a task-augmented request given up before it came: when it names a task (the client
 * made one, and nobody would poll or cancel it), `tasks/cancel` of that task. In the background, never rejects.
 */
async function cancelWhenCreated(peer: ClientTaskPeer, requestId: string): Promise<void> {
  try {
    const late = await peer.answer(requestId, LATE_CREATE_MS, false);
    if ('error' in late) return;
    const created = CreateTaskResultSchema.safeParse(late.result);
    if (created.success && !isTerminalStatus(created.data.task.status)) {
      await peer.post('tasks/cancel', { taskId: created.data.task.taskId });
    }
  } catch {
    // No answer in time, or Redis away: the client's task ends with its ttl.
  }
}

/** How long one `tasks/get` waits for its answer before the next one goes out. */
const POLL_ANSWER_MS = 5000;

/**
 * One `tasks/get`; undefined when its answer did not come in time (the stream that carried it may have died
 * with its gateway): the next poll is a new request, on whichever stream carries the task's messages now.
 */
async function poll(peer: ClientTaskPeer, task: Task, deadline: number) {
  const wait = Math.min(remaining(deadline), Math.max(POLL_ANSWER_MS, 4 * (task.pollInterval ?? peer.minPollMs)));
  try {
    return await request(peer, 'tasks/get', { taskId: task.taskId }, wait);
  } catch (error) {
    if (error instanceof InputWaitError && error.reason === 'timeout' && Date.now() < deadline) return undefined;
    throw error;
  }
}

/** A request to the client and its answer within `timeoutMs` (given up when the tool aborts). */
async function request(
  peer: ClientTaskPeer,
  method: OutboxRequestMethod,
  params: Record<string, unknown>,
  timeoutMs: number,
): Promise<InputAnswer> {
  return await peer.answer(await peer.ask(method, params, timeoutMs), timeoutMs, true);
}

/** What is left of the exchange's time (at least a second: a last answer may still come). */
function remaining(deadline: number): number {
  return Math.max(1000, deadline - Date.now());
}
