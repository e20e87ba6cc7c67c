import { createHash } from 'node:crypto';

/**
 * Builds every Redis key and channel name taskgate uses. Nothing else in the code base concatenates key
 * strings, so the layout (and later Redis Cluster hash tags) lives here alone.
 *
 * Owners (principals, or session ids when auth is off) never appear in keys verbatim: a session id is a
 * bearer secret, so owner-scoped keys use a digest of the owner.
 */
export class Keys {
  constructor(readonly prefix = 'tg') {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(prefix)) {
      throw new Error(`Invalid key prefix '${prefix}': use 1-64 characters of A-Z a-z 0-9 _ . -`);
    }
  }

  /** A stable, non-reversible stand-in for a secret or personal value, safe in keys, logs and job data. */
  static digest(value: string): string {
    return createHash('sha256').update(value).digest('base64url').slice(0, 32);
  }

  /** The id of an owner (a principal, or a session id when auth is off) as keys and records hold it. */
  static ownerId(owner: string): string {
    return Keys.digest(owner);
  }

  /** Hash holding one task's record. */
  task(taskId: string): string {
    return `${this.prefix}:task:${taskId}`;
  }

  /** Stream of server-to-client messages of one task, waiting for a stream to carry them. */
  taskOutbox(taskId: string): string {
    return `${this.prefix}:task:${taskId}:outbox`;
  }

  /** Sorted set of an owner's tasks, score = expiry (ms). */
  ownerTasks(ownerId: string): string {
    return `${this.prefix}:owner:${ownerId}:tasks`;
  }

  /** Sorted set of an owner's non-terminal tasks, score = expiry (ms); its size is the concurrency in use. */
  ownerActive(ownerId: string): string {
    return `${this.prefix}:owner:${ownerId}:active`;
  }

  /** Pub/sub channel that carries every change of one task. */
  taskChannel(taskId: string): string {
    return `${this.prefix}:ch:task:${taskId}`;
  }

  /** Pub/sub channel that carries every change of the tasks a session created (its GET stream's feed). */
  sessionChannel(sessionId: string): string {
    return `${this.prefix}:ch:session:${Keys.digest(sessionId)}`;
  }

  /** Pub/sub channel that announces new entries of a task's outbox (payload: the entry id). */
  outboxChannel(taskId: string): string {
    return `${this.prefix}:ch:outbox:${taskId}`;
  }

  /** Hash of one pending server-to-client request (elicitation, sampling) and, once given, its answer. */
  inputRequest(requestId: string): string {
    return `${this.prefix}:req:${requestId}`;
  }

  /** Pub/sub channel that announces the answer to one server-to-client request. */
  inputRequestChannel(requestId: string): string {
    return `${this.prefix}:ch:req:${requestId}`;
  }

  /** Hash of one MCP session. Keyed by a digest: a session id is a bearer secret and never appears in a key. */
  session(sessionId: string): string {
    return `${this.prefix}:session:${Keys.digest(sessionId)}`;
  }

  /** Lease naming the one open GET stream of a session (its value is the stream's id). */
  sessionStream(sessionId: string): string {
    return `${this.prefix}:session:${Keys.digest(sessionId)}:stream`;
  }

  /** The hidden task that runs a session's direct (non-task) `tools/call`, by the call's JSON-RPC id. */
  clientCall(sessionId: string, requestId: string | number): string {
    return `${this.prefix}:call:${Keys.digest(sessionId)}:${Keys.digest(JSON.stringify(requestId))}`;
  }

  /** Hash of tool name → catalog entry (JSON), written by workers. */
  toolCatalog(): string {
    return `${this.prefix}:tools`;
  }

  /** Sorted set of tool name → last worker heartbeat (ms). */
  toolsLive(): string {
    return `${this.prefix}:tools:live`;
  }

  /** Pub/sub channel that announces changes of the tool catalog. */
  toolsChannel(): string {
    return `${this.prefix}:ch:tools`;
  }

  /** BullMQ's own key prefix for taskgate's queues. */
  bullPrefix(): string {
    return `${this.prefix}:bull`;
  }

  /** Default BullMQ queue name of a tool (BullMQ forbids ':' in queue names). */
  static toolQueueName(tool: string): string {
    return `tool.${tool}`;
  }

  /** Stream of the events of one SSE response or GET stream, for `Last-Event-ID` resumption on any pod. */
  sseStream(streamId: string): string {
    return `${this.prefix}:sse:${streamId}`;
  }
}
