import type { RawListen, RawRequests } from './rev2026-07-28-raw.js';

/** How long the server may take to acknowledge a listen stream before the task is polled instead (ms). */
const ACK_TIMEOUT_MS = 10_000;

type Json = Record<string, unknown>;

/**
 * Whether a 2026-07-28 server serves `subscriptions/listen`, from its `server/discover` capabilities: list
 * changes and resource updates reach a client only on a listen stream, so a server announcing any of them
 * serves it.
 */
export function servesListen(capabilities: Json): boolean {
  const flag = (kind: string, name: string): boolean => ((capabilities[kind] ?? {}) as Json)[name] === true;
  return (
    flag('tools', 'listChanged') ||
    flag('prompts', 'listChanged') ||
    flag('resources', 'listChanged') ||
    flag('resources', 'subscribe')
  );
}

/**
 * One upstream task followed through a `subscriptions/listen` stream (`taskIds` of the tasks extension): the
 * `notifications/tasks` the server sends for it, each the task as `tasks/get` shows it, in order.
 */
export class TaskWatch {
  readonly #queue: Json[] = [];
  #listen: RawListen | undefined;
  #ended = false;
  #wake: (() => void) | undefined;

  /** A watch of `taskId`, or undefined when the server's acknowledgement leaves the task out. */
  static async open(raw: RawRequests, taskId: string, signal: AbortSignal): Promise<TaskWatch | undefined> {
    const watch = new TaskWatch();
    const listen = await raw.listen(
      { taskIds: [taskId] },
      (method, params) => {
        if (method === 'notifications/tasks' && params.taskId === taskId) watch.#push(params);
      },
      ACK_TIMEOUT_MS,
      signal,
    );
    const honoured = listen.honoured.taskIds;
    if (!Array.isArray(honoured) || !honoured.includes(taskId)) {
      await listen.close();
      return undefined;
    }
    watch.#listen = listen;
    void listen.ended.then(() => {
      watch.#ended = true;
      watch.#wake?.();
    });
    return watch;
  }

  /** True once the stream ended and everything it sent was taken: the task is polled from then on. */
  get ended(): boolean {
    return this.#ended && this.#queue.length === 0;
  }

  /** The next state the server sent; undefined when none came within `ms` or the stream ended. */
  async next(ms: number, signal: AbortSignal): Promise<Json | undefined> {
    signal.throwIfAborted();
    if (this.#queue.length === 0 && !this.#ended) {
      await new Promise<void>((resolve, reject) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', aborted);
          this.#wake = undefined;
          resolve();
        };
        const aborted = (): void => {
          done();
          reject(signal.reason);
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener('abort', aborted, { once: true });
        this.#wake = done;
      });
    }
    return this.#queue.shift();
  }

  /** Ends the stream. */
  async close(): Promise<void> {
    this.#ended = true;
    await this.#listen?.close();
  }

  #push(task: Json): void {
    this.#queue.push(task);
    this.#wake?.();
  }
}
