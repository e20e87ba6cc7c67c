import { Pool } from 'undici';
import type { Subject } from '../systems/mcp-subject.js';

/** The protocol revision the lean client speaks (the same as the SDK client's latest). */
const PROTOCOL_VERSION = '2025-11-25';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface RpcAnswer {
  readonly result?: Record<string, unknown>;
  readonly error?: { code: number; message: string };
}

/**
 * The answer to request `id` in a response body: the body itself when JSON, or the `data:` of the SSE event
 * that carries it (other events — notifications, priming events — are skipped).
 */
export function answerOf(contentType: string, body: string, id: number): RpcAnswer {
  if (contentType.startsWith('application/json')) return JSON.parse(body) as RpcAnswer;
  if (!contentType.startsWith('text/event-stream')) throw new Error(`unexpected content type '${contentType}'`);
  for (const event of body.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (data === '') continue;
    const message = JSON.parse(data) as RpcAnswer & { id?: unknown };
    if (message.id === id && (message.result !== undefined || message.error !== undefined)) return message;
  }
  throw new Error(`no answer to request ${id} in the event stream`);
}

/** How a lean subject waits for a task's result. */
export type WaitMode =
  /** `tasks/result` blocks until the task is terminal (taskgate, the SDK anchor). */
  | 'block'
  /** `tasks/get` every advertised `pollInterval` until terminal, then `tasks/result` (FastMCP+Docket). */
  | 'poll';

/**
 * The lean load generator: raw JSON-RPC over HTTP/1.1 keep-alive (one undici pool per server), the same
 * create → result path as the SDK client — `initialize` + `notifications/initialized` per session, then per
 * task `tools/call` with `task` and `tasks/result` — without the SDK's schema validation and per-request
 * abort/timeout machinery. Answers are read whole and parsed as JSON or SSE, whichever the server sent.
 */
export class LeanSubject implements Subject {
  readonly #pool: Pool;
  readonly #path: string;
  readonly #sessions: string[] = [];
  #nextId = 1;

  constructor(
    readonly name: string,
    url: string,
    readonly pids: readonly number[],
    readonly wait: WaitMode = 'block',
    readonly maxInFlight?: number,
    readonly roles?: Readonly<Record<string, readonly number[]>>,
  ) {
    const parsed = new URL(url);
    this.#path = parsed.pathname;
    // undici's default idle keep-alive (4 s) stays below uvicorn's (5 s): a poll 5 s later opens a new
    // connection rather than reuse one the server is closing.
    this.#pool = new Pool(parsed.origin, { pipelining: 1 });
  }

  /** A polling client's tasks wait out the server's poll interval: measured in one stretch. */
  get inOneStretch(): boolean {
    return this.wait === 'poll';
  }

  async #post(
    sessionId: string | undefined,
    body: Record<string, unknown>,
  ): Promise<{ answer?: RpcAnswer; sessionId?: string }> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
    };
    if (sessionId !== undefined) headers['mcp-session-id'] = sessionId;
    const response = await this.#pool.request({
      path: this.#path,
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode === 202) return {};
    if (response.statusCode !== 200) {
      throw new Error(`${this.name}: HTTP ${response.statusCode} to ${String(body.method)}: ${text.slice(0, 200)}`);
    }
    const id = body.id as number;
    const answer = answerOf(String(response.headers['content-type'] ?? ''), text, id);
    const started = response.headers['mcp-session-id'];
    return { answer, ...(typeof started === 'string' && { sessionId: started }) };
  }

  /** One request; its result, or an error carrying the JSON-RPC error. */
  async #request(sessionId: string | undefined, method: string, params: unknown): Promise<Record<string, unknown>> {
    const { answer } = await this.#post(sessionId, { jsonrpc: '2.0', id: this.#nextId++, method, params });
    if (answer?.error !== undefined) throw new Error(`${this.name}: ${method}: ${JSON.stringify(answer.error)}`);
    if (answer?.result === undefined) throw new Error(`${this.name}: ${method}: no result`);
    return answer.result;
  }

  async prepare(sessions: number): Promise<void> {
    while (this.#sessions.length < sessions) {
      const { sessionId } = await this.#post(undefined, {
        jsonrpc: '2.0',
        id: this.#nextId++,
        method: 'initialize',
        params: {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'taskgate-bench-lean', version: '1.0.0' },
        },
      });
      if (sessionId === undefined) throw new Error(`${this.name}: initialize started no session`);
      await this.#post(sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' });
      this.#sessions.push(sessionId);
    }
  }

  async run(lane: number): Promise<void> {
    const sessionId = this.#sessions[lane % this.#sessions.length];
    if (sessionId === undefined) throw new Error(`${this.name}: prepare() first`);
    const created = await this.#request(sessionId, 'tools/call', { name: 'noop', arguments: {}, task: {} });
    const task = created.task as { taskId?: unknown; pollInterval?: unknown } | undefined;
    if (typeof task?.taskId !== 'string') throw new Error(`${this.name}: no task in ${JSON.stringify(created)}`);
    const { taskId } = task;
    if (this.wait === 'poll') {
      const interval = typeof task.pollInterval === 'number' ? task.pollInterval : 1000;
      for (;;) {
        await sleep(interval);
        const { status } = await this.#request(sessionId, 'tasks/get', { taskId });
        if (status === 'completed' || status === 'failed' || status === 'cancelled') break;
      }
    }
    const result = (await this.#request(sessionId, 'tasks/result', { taskId })) as {
      isError?: boolean;
      content?: { type?: string; text?: string }[];
    };
    const first = result.content?.[0];
    if (result.isError === true || first?.type !== 'text' || first.text !== 'ok') {
      throw new Error(`${this.name}: unexpected result ${JSON.stringify(result).slice(0, 200)}`);
    }
  }

  async floor(lane: number): Promise<void> {
    const sessionId = this.#sessions[lane % this.#sessions.length];
    if (sessionId === undefined) throw new Error(`${this.name}: prepare() first`);
    await this.#request(sessionId, 'ping', {});
    await this.#request(sessionId, 'ping', {});
  }

  /** Forgets the sessions (a later `prepare` opens new ones) and closes idle connections. */
  async close(): Promise<void> {
    this.#sessions.splice(0);
  }

  /** Closes the pool for good. */
  async destroy(): Promise<void> {
    await this.#pool.close();
  }
}
