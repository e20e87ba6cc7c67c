import type {
  DirectCalls,
  EventBus,
  EventLog,
  Logger,
  ResourceSubscriptions,
  SessionFeed,
  SessionRecord,
  SessionStore,
  TaskDelivery,
  TaskFollower,
  TaskOutbox,
} from '@taskgate/core';
import type { ResolvedGatewayOptions } from '../options.js';
import type { AbandonServices } from '../tasks/cancel-call.js';
import type { HeldStreams } from './held-streams.js';
import type { QuietIds } from './quiet-id.js';
import type { StreamRegistry } from './stream-registry.js';

/** What the SSE streams use: the records they relay, their event logs and leases, and this process's streams. */
export interface StreamServices extends AbandonServices {
  readonly options: ResolvedGatewayOptions;
  /** The sessions' open direct calls, by JSON-RPC request id. */
  readonly calls: DirectCalls;
  readonly sessions: SessionStore;
  /** Sessions' resource subscriptions (relayed on their GET streams). */
  readonly subscriptions: ResourceSubscriptions;
  readonly bus: EventBus;
  readonly outbox: TaskOutbox;
  /** Wakes the requests that wait on a task (one subscription of its channel per process). */
  readonly follower: TaskFollower;
  /** SSE event logs and their connection leases (resumable streams). */
  readonly events: EventLog;
  /** Which stream carries each task's outbox, and how far it went out. */
  readonly delivery: TaskDelivery;
  /** The sessions' feeds that GET streams relay. */
  readonly feed: SessionFeed;
  readonly streams: StreamRegistry;
  /** This process's beat, and the leases of its task streams (released by another process if it dies). */
  readonly held: HeldStreams;
  /** The priming ids of quiet tasks/result streams, which name their task and request (see `QuietResult`). */
  readonly quietIds: QuietIds;
}

/**
 * What a stream uses of its session's record: a waiting stream keeps this, not the whole record (the client's
 * capabilities and info), for as long as it waits.
 */
export type StreamSession = Pick<SessionRecord, 'sessionId' | 'protocolVersion' | 'principalId'>;

/** A stream of an established session, for an authenticated caller. */
export interface SessionContext {
  readonly services: StreamServices;
  readonly session: StreamSession;
  /** Owner of the tasks the stream carries: the principal, or the session id when auth is off. */
  readonly owner: string;
  readonly principal?: string;
  readonly logger: Logger;
}
