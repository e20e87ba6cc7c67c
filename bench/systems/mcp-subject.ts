import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';

/** Something the latency and throughput workloads can drive: one create → result per call of `run`. */
export interface Subject {
  readonly name: string;
  /** Makes sure `sessions` independent clients exist (MCP subjects; a no-op elsewhere). */
  prepare(sessions: number): Promise<void>;
  /** One complete create → result; `lane` picks the client. Throws when the result is not the tool's. */
  run(lane: number): Promise<void>;
  /** The floor of `run` for MCP servers: two requests that do nothing (`ping`) through the same client. */
  floor?(lane: number): Promise<void>;
  /** The most requests in flight it is driven with (b skips higher levels); unbounded when absent. */
  readonly maxInFlight?: number | undefined;
  /**
   * Measured in one stretch, not in rounds (b): its tasks wait out 5 s polls, so a short round would be mostly
   * the tail of its last polls.
   */
  readonly inOneStretch?: boolean;
  /** Processes that serve it (servers, workers, Redis), for CPU accounting. */
  readonly pids: readonly number[];
  /** The same processes by kind (gateway, worker, redis), where the capacity table wants each one's CPU. */
  readonly roles?: Readonly<Record<string, readonly number[]>> | undefined;
  close(): Promise<void>;
}

/** A connected official SDK client and its session id. */
export interface Session {
  readonly client: Client;
  readonly sessionId: string;
}

/** Connects an official SDK client (Streamable HTTP) to `url`. */
export async function connect(url: string, name = 'taskgate-bench'): Promise<Session> {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  const sessionId = transport.sessionId;
  if (sessionId === undefined) throw new Error(`${url} started no session`);
  return { client, sessionId };
}

/**
 * The same client code for taskgate and the anchor: the official SDK `Client`, the spec's create → result
 * path — `tools/call` with `task` (CreateTaskResult), then `tasks/result`, which blocks until the task is
 * terminal and returns the tool's result. (`callToolStream` would poll `tasks/get` every pollInterval,
 * 1 s by default on both servers, and so measure the client's poll interval rather than the server.)
 */
export class McpSubject implements Subject {
  readonly #sessions: Session[] = [];

  constructor(
    readonly name: string,
    readonly url: string,
    readonly pids: readonly number[],
    readonly roles?: Readonly<Record<string, readonly number[]>>,
  ) {}

  async prepare(sessions: number): Promise<void> {
    while (this.#sessions.length < sessions) this.#sessions.push(await connect(this.url));
  }

  async run(lane: number): Promise<void> {
    const session = this.#sessions[lane % this.#sessions.length];
    if (session === undefined) throw new Error(`${this.name}: prepare() first`);
    const { client } = session;
    const created = await client.request(
      { method: 'tools/call', params: { name: 'noop', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    const first = result.content[0];
    if (result.isError === true || first?.type !== 'text' || first.text !== 'ok') {
      throw new Error(`${this.name}: unexpected result ${JSON.stringify(result).slice(0, 200)}`);
    }
  }

  async floor(lane: number): Promise<void> {
    const session = this.#sessions[lane % this.#sessions.length];
    if (session === undefined) throw new Error(`${this.name}: prepare() first`);
    await session.client.ping();
    await session.client.ping();
  }

  /** Closes the sessions opened so far (a later `prepare` opens new ones). */
  async close(): Promise<void> {
    await Promise.all(this.#sessions.splice(0).map(({ client }) => client.close().catch(() => {})));
  }
}
