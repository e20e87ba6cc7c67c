/**
 * One client session of the chaos load: its id, its GET stream (held open through the load balancer and
 * resumed with `Last-Event-ID` when it drops: taskgate sends a task's messages there while no `tasks/result`
 * stream carries them, INP-5), and what every stream of the session delivers — progress counted per token,
 * elicitations answered once per request id.
 */
import { exchange, headers, type Message, postWithRetry, sleep } from './rpc.js';

/** Where the session's clients count what arrives for one task. */
export interface TaskInbox {
  /** Receipts of each progress number (index = progress value). */
  readonly progress: number[];
  /** Elicitations received (each request id once), and the HTTP status of each answer. */
  asked: number;
  readonly answers: number[];
}

export interface SessionPlan {
  readonly url: string;
  /** Nothing is retried after this. */
  readonly settleUntil: number;
  readonly bump: (what: string) => void;
  /** An answer was accepted (202). */
  readonly answered: () => void;
}

const REQUEST_TIMEOUT_MS = 10_000;
const GET_TIMEOUT_MS = 60_000;
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

export class ChaosSession {
  id: string | undefined;
  /** Progress token → the task's inbox (registered before its tools/call goes out). */
  readonly #byToken = new Map<string, TaskInbox>();
  /** Task id → its inbox, once acknowledged (elicitations name their task). */
  readonly #byTask = new Map<string, TaskInbox>();
  readonly #answered = new Set<unknown>();
  readonly #answers: Promise<void>[] = [];
  readonly #plan: SessionPlan;
  readonly #stop = new AbortController();
  #getStream: Promise<void> | undefined;
  /** GET streams opened, and resumed with Last-Event-ID. */
  getOpened = 0;
  getResumed = 0;

  constructor(plan: SessionPlan) {
    this.#plan = plan;
  }

  /** Initializes a session (again, after one was lost) and opens its GET stream. */
  async initialize(): Promise<boolean> {
    const answer = await postWithRetry(
      this.#plan.url,
      undefined,
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: { elicitation: { form: {} } },
          clientInfo: { name: 'chaos', version: '1' },
        },
      },
      {
        until: this.#plan.settleUntil,
        timeoutMs: REQUEST_TIMEOUT_MS,
        onRetry: (why) => this.#plan.bump(`initialize: ${why}`),
      },
    );
    this.id = answer.status === 200 ? answer.sessionId : undefined;
    if (this.id !== undefined) {
      const previous = this.#getStream ?? Promise.resolve();
      const id = this.id;
      this.#getStream = previous.then(() => this.#holdGetStream(id));
    }
    return this.id !== undefined;
  }

  /** The inbox of a task about to be created with `progressToken`. */
  inbox(progressToken: string): TaskInbox {
    const inbox: TaskInbox = { progress: [], asked: 0, answers: [] };
    this.#byToken.set(progressToken, inbox);
    return inbox;
  }

  /** The task was acknowledged: its elicitations (which name it) count in `inbox`. */
  acknowledged(taskId: string, inbox: TaskInbox): void {
    this.#byTask.set(taskId, inbox);
  }

  /** Takes one message of any of the session's streams. */
  readonly take = (message: Message): void => {
    if (message.method === 'notifications/progress') {
      const inbox = this.#byToken.get(String(message.params?.progressToken));
      const value = Number(message.params?.progress);
      if (inbox !== undefined) inbox.progress[value] = (inbox.progress[value] ?? 0) + 1;
    }
    if (message.method === 'elicitation/create' && message.id !== undefined && !this.#answered.has(message.id)) {
      this.#answered.add(message.id);
      const related = (message.params?._meta as Record<string, { taskId?: string }> | undefined)?.[RELATED_TASK];
      const inbox = related?.taskId === undefined ? undefined : this.#byTask.get(related.taskId);
      if (inbox !== undefined) inbox.asked += 1;
      this.#answers.push(this.#answer(message.id, inbox));
    }
  };

  /** Stops the GET stream and waits for every answer under way. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#getStream;
    await Promise.all(this.#answers);
  }

  async #answer(id: string | number | null, inbox: TaskInbox | undefined): Promise<void> {
    const result = await postWithRetry(
      this.#plan.url,
      this.id,
      { jsonrpc: '2.0', id, result: { action: 'accept', content: { name: 'chaos' } } },
      {
        until: this.#plan.settleUntil,
        timeoutMs: REQUEST_TIMEOUT_MS,
        onRetry: (why) => this.#plan.bump(`answer: ${why}`),
      },
    );
    inbox?.answers.push(result.status);
    if (result.status === 202) this.#plan.answered();
    else this.#plan.bump(`answer refused: HTTP ${result.status}`);
  }

  /** Holds the session's GET stream open until `close`, resuming it with Last-Event-ID when it drops. */
  async #holdGetStream(sessionId: string): Promise<void> {
    let lastEventId: string | undefined;
    for (let delay = 50; !this.#stop.signal.aborted && this.id === sessionId; delay = Math.min(1000, delay * 2)) {
      if (Date.now() > this.#plan.settleUntil) return;
      if (lastEventId === undefined) this.getOpened += 1;
      else this.getResumed += 1;
      const result = await exchange(
        this.#plan.url,
        {
          method: 'GET',
          headers: {
            ...headers(sessionId, lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
            Accept: 'text/event-stream',
          },
          signal: AbortSignal.any([this.#stop.signal, AbortSignal.timeout(GET_TIMEOUT_MS)]),
        },
        this.take,
      );
      if (this.#stop.signal.aborted) return;
      if (result.lastEventId !== undefined) {
        lastEventId = result.lastEventId;
        delay = 50;
      }
      if (result.status !== 200)
        this.#plan.bump(`GET stream: ${result.status === 0 ? 'no answer' : `HTTP ${result.status}`}`);
      await sleep(delay);
    }
  }
}
