import { createHash } from 'node:crypto';

/** What workers publish in the catalog: tools, and the offerings the gateway serves by asking a worker. */
export type CatalogKind = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';

const CATALOG_KEY_NAMES: Record<Exclude<CatalogKind, 'tools'>, string> = {
  resources: 'resources',
  resourceTemplates: 'resource-templates',
  prompts: 'prompts',
};

const digests = new Map<string, string>();

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

  /**
   * A stable, non-reversible stand-in for a secret or personal value, safe in keys, logs and job data.
   * Every request digests its session id several times: the last few thousand digests are remembered.
   */
  static digest(value: string): string {
    let digest = digests.get(value);
    if (digest === undefined) {
      digest = createHash('sha256').update(value).digest('base64url').slice(0, 32);
      if (digests.size >= 4096) digests.clear();
      digests.set(value, digest);
    }
    return digest;
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

  /** Pub/sub channel that carries every change of one task a client can see (status, status message). */
  taskChannel(taskId: string): string {
    return `${this.prefix}:ch:task:${taskId}`;
  }

  /** Pub/sub channel on which workers hear of every cancelled task (payload: the task id), one per process. */
  cancelledChannel(): string {
    return `${this.prefix}:ch:cancelled`;
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

  /**
   * Hash of one catalog kind (name or URI → entry JSON), written by workers. The tools catalog keeps its
   * first name, `tg:tools`; resources, resource templates and prompts live beside it.
   */
  catalog(kind: CatalogKind): string {
    return kind === 'tools' ? this.toolCatalog() : `${this.prefix}:${CATALOG_KEY_NAMES[kind]}`;
  }

  /** Sorted set of one catalog kind: entry name → last worker heartbeat (ms). */
  catalogLive(kind: CatalogKind): string {
    return kind === 'tools' ? this.toolsLive() : `${this.catalog(kind)}:live`;
  }

  /** Pub/sub channel announcing changes of a catalog kind; resources and templates share one (one list_changed). */
  catalogChannel(kind: CatalogKind): string {
    if (kind === 'tools') return this.toolsChannel();
    return `${this.prefix}:ch:${kind === 'prompts' ? 'prompts' : 'resources'}`;
  }

  /** Pub/sub channel on which workers announce that a resource changed (payload: its URI). */
  resourceUpdatedChannel(): string {
    return `${this.prefix}:ch:resource-updated`;
  }

  /** Pub/sub channel that tells a session's GET stream its resource subscriptions changed. */
  sessionSubscriptionsChannel(sessionId: string): string {
    return `${this.prefix}:ch:session:${Keys.digest(sessionId)}:subs`;
  }

  /** BullMQ's own key prefix for taskgate's queues. */
  bullPrefix(): string {
    return `${this.prefix}:bull`;
  }

  /** Default BullMQ queue name of a tool (BullMQ forbids ':' in queue names). */
  static toolQueueName(tool: string): string {
    return `tool.${tool}`;
  }

  /**
   * Prefix of the rate-limit counters of one operation class (`create`, `read`, `cancel`);
   * rate-limiter-flexible appends `:{owner digest}`. Shared by every gateway, so limits hold cluster-wide.
   */
  rateLimit(operation: string): string {
    return `${this.prefix}:rl:${operation}`;
  }

  /** Stream of the events of one SSE response or GET stream, for `Last-Event-ID` resumption on any pod. */
  sseStream(streamId: string): string {
    return `${this.prefix}:sse:${streamId}`;
  }

  /** Hash with the state of one SSE stream: its session, kind, task, JSON-RPC id, event counter, feed position. */
  sseState(streamId: string): string {
    return `${this.prefix}:sse:${streamId}:state`;
  }

  /** Lease naming the one HTTP connection that carries an SSE stream now (fences every other writer). */
  sseConnection(streamId: string): string {
    return `${this.prefix}:sse:${streamId}:conn`;
  }

  /**
   * Stream of what happened to a session's tasks (status snapshots, outbox arrivals no tasks/result stream
   * carries), in order: the durable feed of its GET stream, so a resumed GET stream misses nothing.
   */
  sessionFeed(sessionId: string): string {
    return `${this.prefix}:session:${Keys.digest(sessionId)}:feed`;
  }

  /** Lease naming the stream that carries a task's outbox now (a tasks/result or direct-call stream). */
  taskCarrier(taskId: string): string {
    return `${this.prefix}:carrier:${taskId}`;
  }

  /**
   * Hash of how a task's outbox was relayed: `cursor` = the last entry some stream took, and for each input
   * request the stream that took it (to re-send requests whose stream is gone, INP-3).
   */
  taskRelay(taskId: string): string {
    return `${this.prefix}:relay:${taskId}`;
  }

  /**
   * Hash with the bridge's position in one existing queue's event stream (the last applied entry id) and the
   * lease naming the bridge replica that follows it. Names are URI-encoded: no ':' or '{}' of theirs leaks.
   */
  bridgePosition(connection: string, queue: string): string {
    return `${this.prefix}:bridge:${encodeURIComponent(connection)}:${encodeURIComponent(queue)}`;
  }
}
