import { randomBytes } from 'node:crypto';
import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { ErrorCode, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';

/** How often an upstream is told to poll a client task of the bridge, and how often `tasks/result` re-reads it. */
const POLL_INTERVAL_MS = 500;
/** The longest delay a Node timer takes (a longer one would fire at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Tasks per `tasks/list` page. */
const PAGE_SIZE = 50;

/** The JSON-RPC error a failed task's `tasks/result` answers with: the error of the request it ran. */
export interface TaskError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

interface Entry {
  task: Task;
  result?: Result;
  error?: TaskError;
  readonly cancel: AbortController;
  expiry?: NodeJS.Timeout;
}

function isTerminal(status: Task['status']): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** An error the SDK's handlers pass on to the upstream as this JSON-RPC error (an McpError would prefix it). */
function rpcError(error: TaskError): Error {
  return Object.assign(new Error(error.message), { code: error.code, data: error.data });
}

/**
 * The client tasks (CLT-1) the bridge runs for one upstream connection: the requests for input an upstream sent
 * with `task`, answered by asking taskgate's client. In memory and per connection, on purpose: the upstream call
 * that asked is bound to this bridge process and this connection, so its tasks cannot outlive either. The SDK's
 * Protocol serves `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` from it. Unlike the SDK's
 * InMemoryTaskStore it forgets a task whose call ended, keeps the JSON-RPC error a failed task answers
 * `tasks/result` with, and aborts the pending question when the upstream cancels the task.
 */
export class ClientTaskStore implements TaskStore {
  readonly #tasks = new Map<string, Entry>();

  async createTask(options: CreateTaskOptions): Promise<Task> {
    // 128 random bits: an upstream cannot guess another connection's (or call's) task.
    const taskId = randomBytes(16).toString('hex');
    const now = new Date().toISOString();
    const ttl = options.ttl ?? null;
    const task: Task = { taskId, status: 'working', ttl, createdAt: now, lastUpdatedAt: now };
    task.pollInterval = options.pollInterval ?? POLL_INTERVAL_MS;
    const entry: Entry = { task, cancel: new AbortController() };
    // Like the SDK's store, a task is kept for its ttl from creation (the requestor's choice), then forgotten.
    if (ttl !== null) entry.expiry = setTimeout(() => this.forget(taskId), Math.min(ttl, MAX_TIMER_MS));
    this.#tasks.set(taskId, entry);
    return { ...task };
  }

  async getTask(taskId: string): Promise<Task | null> {
    const entry = this.#tasks.get(taskId);
    return entry === undefined ? null : { ...entry.task };
  }

  async storeTaskResult(taskId: string, status: 'completed' | 'failed', result: Result): Promise<void> {
    const entry = this.#live(taskId);
    entry.result = result;
    this.#move(entry, status);
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const entry = this.#tasks.get(taskId);
    if (entry === undefined) throw rpcError({ code: ErrorCode.InvalidParams, message: `Task not found: ${taskId}` });
    if (entry.error !== undefined) throw rpcError(entry.error);
    if (entry.task.status === 'cancelled') {
      throw rpcError({ code: ErrorCode.InvalidRequest, message: `Task ${taskId} was cancelled; it has no result` });
    }
    if (entry.result === undefined) throw rpcError({ code: ErrorCode.InternalError, message: 'No result yet' });
    return entry.result;
  }

  async updateTaskStatus(taskId: string, status: Task['status'], statusMessage?: string): Promise<void> {
    const entry = this.#live(taskId);
    this.#move(entry, status, statusMessage);
    if (status === 'cancelled') entry.cancel.abort(new Error('The upstream cancelled the task'));
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const ids = [...this.#tasks.keys()];
    const start = cursor === undefined ? 0 : ids.indexOf(cursor) + 1;
    if (cursor !== undefined && start === 0) throw new Error(`Invalid cursor: ${cursor}`);
    const page = ids.slice(start, start + PAGE_SIZE);
    const tasks = page.flatMap((id) => {
      const entry = this.#tasks.get(id);
      return entry === undefined ? [] : [{ ...entry.task }];
    });
    return start + PAGE_SIZE < ids.length ? { tasks, nextCursor: page.at(-1) as string } : { tasks };
  }

  /** Aborts when the upstream cancels the task (or it is forgotten). */
  cancelled(taskId: string): AbortSignal {
    return this.#live(taskId).cancel.signal;
  }

  /** Keeps the error a failed task's `tasks/result` answers with (before its status moves to `failed`). */
  keepError(taskId: string, error: TaskError): void {
    const entry = this.#tasks.get(taskId);
    if (entry !== undefined && !isTerminal(entry.task.status)) entry.error = error;
  }

  /** Drops a task: its call ended, its ttl passed or the connection closed. */
  forget(taskId: string): void {
    const entry = this.#tasks.get(taskId);
    if (entry === undefined) return;
    clearTimeout(entry.expiry);
    this.#tasks.delete(taskId);
    entry.cancel.abort(new Error('The task was dropped'));
  }

  /** Drops every task (the connection closed). */
  clear(): void {
    for (const taskId of [...this.#tasks.keys()]) this.forget(taskId);
  }

  get size(): number {
    return this.#tasks.size;
  }

  #live(taskId: string): Entry {
    const entry = this.#tasks.get(taskId);
    if (entry === undefined) throw new Error(`Task ${taskId} not found`);
    if (isTerminal(entry.task.status)) {
      throw new Error(`Task ${taskId} is already ${entry.task.status}; a terminal task does not change`);
    }
    return entry;
  }

  #move(entry: Entry, status: Task['status'], statusMessage?: string): void {
    entry.task.status = status;
    if (statusMessage !== undefined) entry.task.statusMessage = statusMessage;
    entry.task.lastUpdatedAt = new Date().toISOString();
  }
}
