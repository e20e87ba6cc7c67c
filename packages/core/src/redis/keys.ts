import { createHash } from 'node:crypto';
import { DEFAULT_KEY_PREFIX } from '../defaults.js';

/** What workers publish in the catalog: tools, and the offerings the gateway serves by asking a worker. */
export type CatalogKind = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';

const CATALOG_KEY_NAMES: Record<Exclude<CatalogKind, 'tools'>, string> = {
  resources: 'resources',
  resourceTemplates: 'resource-templates',
  prompts: 'prompts',
};

const digests = new Map<string, string>();

/** Length of a slot tag: 4 base64url characters (24 bits), enough to spread owners over all 16384 slots. */
export const SLOT_TAG_LENGTH = 4;
/** A session id taskgate issued: its owner's slot tag, a dot, 256 random bits (see `newSessionId`). */
const TAGGED_SESSION_ID = /^[A-Za-z0-9_-]{4}\.[A-Za-z0-9_-]{43}$/;
const SLOT_TAG = /^[A-Za-z0-9_-]{4}/;

/**
 * Builds every Redis key and channel name taskgate uses. Nothing else in the code base concatenates key
 * strings, so the layout and its Redis Cluster hash tags live here alone.
 *
 * Slots: everything of one owner (a principal, or a session when auth is off) carries the owner's **slot tag**
 * `{t}` — its tasks with their outboxes, relay states and carrier leases, its task indexes, its sessions with
 * their feeds and leases, their SSE streams, its input requests and the per-task and per-session channels — so
 * every script and MULTI about one owner touches one slot, and owners spread over the shards. Ids carry the tag
 * in their first characters (task ids, session ids, stream ids, input request ids, owner ids), so a key is built
 * from an id alone. Process-wide keys (the catalog, rate limits) and each BullMQ queue have tags of their own.
 *
 * Owners never appear in keys verbatim: a session id is a bearer secret, so owner-scoped keys use a digest.
 */
export class Keys {
  constructor(readonly prefix = DEFAULT_KEY_PREFIX) {
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

  /**
   * The slot tag of an owner (a principal, or a session id when auth is off): the tag a session id carries, or
   * the first characters of the owner's digest. Only where keys live depends on it, never who may read them.
   */
  static slotTag(owner: string): string {
    return TAGGED_SESSION_ID.test(owner)
      ? owner.slice(0, SLOT_TAG_LENGTH)
      : Keys.digest(owner).slice(0, SLOT_TAG_LENGTH);
  }

  /** The id of an owner as keys and records hold it: its slot tag, then the digest of the owner. */
  static ownerId(owner: string): string {
    return `${Keys.slotTag(owner)}${Keys.digest(owner)}`;
  }

  /** The slot tag at the start of an id (task, stream, owner id); an id too short for one gets a fixed tag. */
  static tagOf(id: string): string {
    return SLOT_TAG.exec(id)?.[0] ?? '____';
  }

  /** `prefix:{tag}`: the start of every key and channel of one owner. */
  #slot(id: string): string {
    return `${this.prefix}:{${Keys.tagOf(id)}}`;
  }

  /** The start of a session's keys: its owner's slot, then the digest of its id. */
  #session(sessionId: string): string {
    return `${this.prefix}:{${Keys.slotTag(sessionId)}}:session:${Keys.digest(sessionId)}`;
  }

  /** Hash holding one task's record. */
  task(taskId: string): string {
    return `${this.#slot(taskId)}:task:${taskId}`;
  }

  /** Stream of server-to-client messages of one task, waiting for a stream to carry them. */
  taskOutbox(taskId: string): string {
    return `${this.#slot(taskId)}:task:${taskId}:outbox`;
  }

  /** Sorted set of an owner's tasks, score = expiry (ms). */
  ownerTasks(ownerId: string): string {
    return `${this.#slot(ownerId)}:owner:${ownerId}:tasks`;
  }

  /** Sorted set of an owner's non-terminal tasks, score = expiry (ms); its size is the concurrency in use. */
  ownerActive(ownerId: string): string {
    return `${this.#slot(ownerId)}:owner:${ownerId}:active`;
  }

  /**
   * Sorted set of a principal's sessions (session digest, score = idle expiry ms): its size is the number of
   * sessions the principal has, for the per-principal session limit.
   */
  ownerSessions(ownerId: string): string {
    return `${this.#slot(ownerId)}:owner:${ownerId}:sessions`;
  }

  /**
   * Pub/sub channel that carries every change of one task a client can see (status, status message: a JSON
   * snapshot) and every arrival in its outbox (the entry id), in the order they happened.
   */
  taskChannel(taskId: string): string {
    return `${this.#slot(taskId)}:ch:task:${taskId}`;
  }

  /** Pattern matching every task's channel (the operator console's live view; classic pub/sub only). */
  taskChannelPattern(): string {
    return `${this.prefix}:{*}:ch:task:*`;
  }

  /** Pattern matching every task's record hash (and, with TYPE hash, only those), for operator scans. */
  taskPattern(): string {
    return `${this.prefix}:{*}:task:*`;
  }

  /** Stream of the trail of a task written by earlier versions (now fields of the task hash, see TaskTrail). */
  taskTrail(taskId: string): string {
    return `${this.#slot(taskId)}:trail:${taskId}`;
  }

  /** Sorted set of worker process id → heartbeat expiry (ms); with `worker(id)`, the workers alive now. */
  workers(): string {
    return `${this.prefix}:{catalog}:workers`;
  }

  /** Sorted set of gateway process id → its last heartbeat (ms): the gateways alive, and those that died. */
  gateways(): string {
    return `${this.prefix}:{gateways}:alive`;
  }

  /** Set of the task streams one gateway process holds leases for (`<streamId> <connectionId> <taskId>`). */
  gatewayStreams(gatewayId: string): string {
    return `${this.prefix}:{gateways}:streams:${gatewayId}`;
  }

  /** String with one worker process's pod name and tools (JSON), PX = its heartbeat lease. */
  worker(workerId: string): string {
    return `${this.prefix}:{catalog}:worker:${workerId}`;
  }

  /** Pub/sub channel on which workers hear of every cancelled task (payload: the task id), one per process. */
  cancelledChannel(): string {
    return `${this.prefix}:ch:cancelled`;
  }

  /** Pub/sub channel that carries every change of the tasks a session created (its GET stream's feed). */
  sessionChannel(sessionId: string): string {
    return this.sessionChannelOf(Keys.slotTag(sessionId), Keys.digest(sessionId));
  }

  /** Hash of one pending server-to-client request (elicitation, sampling) and, once given, its answer. */
  inputRequest(requestId: string): string {
    return `${this.#slot(requestId.slice(3))}:req:${requestId}`;
  }

  /** Pub/sub channel that announces the answer to one server-to-client request. */
  inputRequestChannel(requestId: string): string {
    return `${this.#slot(requestId.slice(3))}:ch:req:${requestId}`;
  }

  /** Hash of one MCP session. Keyed by a digest: a session id is a bearer secret and never appears in a key. */
  session(sessionId: string): string {
    return `${this.#session(sessionId)}`;
  }

  /** Lease naming the one open GET stream of a session (its value is the stream's id). */
  sessionStream(sessionId: string): string {
    return `${this.#session(sessionId)}:stream`;
  }

  /** The hidden task that runs a session's direct (non-task) `tools/call`, by the call's JSON-RPC id. */
  clientCall(sessionId: string, requestId: string | number): string {
    return `${this.prefix}:{${Keys.slotTag(sessionId)}}:call:${Keys.digest(sessionId)}:${Keys.digest(JSON.stringify(requestId))}`;
  }

  /** Hash of tool name → catalog entry (JSON), written by workers. The catalog's keys share one slot. */
  toolCatalog(): string {
    return `${this.prefix}:{catalog}:tools`;
  }

  /** Sorted set of tool name → last worker heartbeat (ms). */
  toolsLive(): string {
    return `${this.prefix}:{catalog}:tools:live`;
  }

  /** Pub/sub channel that announces changes of the tool catalog. */
  toolsChannel(): string {
    return `${this.prefix}:ch:tools`;
  }

  /**
   * Hash of one catalog kind (name or URI → entry JSON), written by workers: the tools catalog, and beside it
   * resources, resource templates and prompts.
   */
  catalog(kind: CatalogKind): string {
    return kind === 'tools' ? this.toolCatalog() : `${this.prefix}:{catalog}:${CATALOG_KEY_NAMES[kind]}`;
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

  /** Sorted set of resource subscriptions across sessions: `<uri>\n<session digest>` → expiry (ms). */
  resourceInterest(): string {
    return `${this.prefix}:resource-interest`;
  }

  /** Pub/sub channel that tells a session's GET stream its resource subscriptions changed. */
  sessionSubscriptionsChannel(sessionId: string): string {
    return `${this.sessionChannelOf(Keys.slotTag(sessionId), Keys.digest(sessionId))}:subs`;
  }

  /**
   * BullMQ's key prefix for one of taskgate's queues. It carries the queue's own hash tag (BullMQ's scripts
   * touch many keys of a queue: on a cluster they must share a slot), so queues spread over the shards.
   */
  bullPrefix(queue: string): string {
    return `${this.prefix}:bull:{${queue}}`;
  }

  /** A key of a BullMQ queue's slot (its meta hash), to reach the master that holds the queue. */
  queueSlotKey(queue: string): string {
    return `${this.bullPrefix(queue)}:${queue}:meta`;
  }

  /**
   * Sorted set of the shard counts a tool queue has had (member: the count, score: when a worker last ran with
   * it): workers consume the shards of every count here until the old ones drain (queues/queue-shards.ts).
   */
  queueShardCounts(queue: string): string {
    return `${this.prefix}:{catalog}:queue-shards:${queue}`;
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
    return `${this.#slot(streamId)}:sse:${streamId}`;
  }

  /** Hash with the state of one SSE stream: its session, kind, task, JSON-RPC id, event counter, feed position. */
  sseState(streamId: string): string {
    return `${this.#slot(streamId)}:sse:${streamId}:state`;
  }

  /** Lease naming the one HTTP connection that carries an SSE stream now (fences every other writer). */
  sseConnection(streamId: string): string {
    return `${this.#slot(streamId)}:sse:${streamId}:conn`;
  }

  /**
   * Stream of what happened to a session's tasks (status snapshots, outbox arrivals no tasks/result stream
   * carries), in order: the durable feed of its GET stream, so a resumed GET stream misses nothing.
   */
  sessionFeed(sessionId: string): string {
    return this.sessionFeedOf(Keys.slotTag(sessionId), Keys.digest(sessionId));
  }

  /** The feed of a session by its owner's slot tag and the digest of its id (what a task record holds). */
  sessionFeedOf(tag: string, sessionDigest: string): string {
    return `${this.prefix}:{${tag}}:session:${sessionDigest}:feed`;
  }

  /** The channel of a session by its owner's slot tag and the digest of its id. */
  sessionChannelOf(tag: string, sessionDigest: string): string {
    return `${this.prefix}:{${tag}}:ch:session:${sessionDigest}`;
  }

  /** True for the channels that belong to one slot (one task, session or request): sharded pub/sub. */
  static isShardChannel(channel: string): boolean {
    return channel.includes('{');
  }

  /** Lease naming the stream that carries a task's outbox now (a tasks/result or direct-call stream). */
  taskCarrier(taskId: string): string {
    return `${this.#slot(taskId)}:carrier:${taskId}`;
  }

  /**
   * Hash of how a task's outbox was relayed: `cursor` = the last entry some stream took, and for each input
   * request the stream that took it (to re-send requests whose stream is gone, INP-3).
   */
  taskRelay(taskId: string): string {
    return `${this.#slot(taskId)}:relay:${taskId}`;
  }

  /**
   * Hash with the bridge's position in one existing queue's event stream (the last applied entry id) and the
   * lease naming the bridge replica that follows it. Names are URI-encoded: no ':' or '{}' of theirs leaks.
   */
  bridgePosition(connection: string, queue: string): string {
    return `${this.prefix}:bridge:${encodeURIComponent(connection)}:${encodeURIComponent(queue)}`;
  }

  /** A Celery-bridged task's hand-off: 'sending' while its one Celery message is being sent, then 'sent'. */
  celeryHandOff(taskId: string): string {
    return `${this.#slot(taskId)}:celery:sent:${taskId}`;
  }

  /** A digest of the last Celery state the bridge applied to the task (each state is applied once). */
  celeryApplied(taskId: string): string {
    return `${this.#slot(taskId)}:celery:applied:${taskId}`;
  }

  /** An AMQP-bridged task's hand-off: 'sending' while its request is being published, then `sent:<ms>`. */
  amqpHandOff(taskId: string): string {
    return `${this.#slot(taskId)}:amqp:sent:${taskId}`;
  }
}
