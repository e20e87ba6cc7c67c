export { type QueueStats, queueStats } from './admin-queues.js';
export {
  type AdminCancelResult,
  type AdminTask,
  type AdminTaskDetail,
  type AdminTaskPage,
  type AdminTaskQuery,
  AdminTasks,
  type AdminTasksOptions,
  type PurgeProgress,
  type PurgeQuery,
  type TimelineEntry,
} from './admin-tasks.js';
export { type UpstreamCallRecord, UpstreamCalls } from './bridge/upstream-calls.js';
export { UpstreamSnapshots } from './bridge/upstream-snapshots.js';
export { type AdvanceReply, BridgePositions, type BridgeStream } from './bridge-positions.js';
export {
  type EventStreamEnds,
  type ExistingJobState,
  ExistingQueue,
  type ExistingQueueAddress,
  type ExistingQueueEvent,
  streamEntryTime,
} from './bridge-queues.js';
export { announceListChanged, Catalog, type CatalogOptions } from './catalog.js';
export {
  createRedisConnection,
  DEFAULT_COMMAND_TIMEOUT_MS,
  isRedisConnection,
  type RedisConnectionOptions,
  type RedisNode,
  type RedisRole,
  type WaitReplicas,
  waitPolicyOf,
} from './connection.js';
export { DirectCalls, type DirectCallsOptions } from './direct-calls.js';
export {
  cannotCancelTerminal,
  type InternalErrorCode,
  invalidCursor,
  type RefusalReason,
  sessionLimitExceeded,
  TaskgateError,
  TaskRefusal,
  taskExpired,
  taskLimitExceeded,
  taskNotFound,
} from './errors.js';
export { type ChannelListener, EventBus, type Unsubscribe } from './event-bus.js';
export {
  EventLog,
  type EventLogOptions,
  type LoggedEvent,
  type RelayInput,
  type RelayOutcome,
  type StreamKind,
  type StreamState,
} from './event-log.js';
export { GatewayRegistry, type GatewayRegistryOptions, type HeldStream } from './gateway-registry.js';
export { isTaskIdShape, newTaskId } from './ids.js';
export {
  type InputAnswer,
  InputRequests,
  type InputRequestsOptions,
  InputWaitError,
  type WaitOptions,
} from './input-requests.js';
export { type CatalogKind, Keys } from './keys.js';
export { ListCursorCodec, type ListPosition } from './list-cursor.js';
export { errorMessage, type LogFn, type Logger, noopLogger } from './logger.js';
export { QUEUE_STATES, type QueueSource, watchQueues } from './metrics/queue-metrics.js';
export { watchRedis } from './metrics/redis-metrics.js';
export {
  BoundedLabel,
  counterIn,
  createMetricsRegistry,
  gaugeIn,
  histogramIn,
  type MetricsRegistryOptions,
  toolLabelOf,
} from './metrics/registry.js';
export { taskMetrics } from './metrics/task-metrics.js';
export {
  OfferingCatalog,
  type OfferingCatalogOptions,
  type Offerings,
  type PromptEntry,
  type ResolvedResource,
  type ResourceEntry,
  type ResourceTemplateEntry,
} from './offering-catalog.js';
export { type OutboxEntry, type OutboxMessage, TaskOutbox, type TaskOutboxOptions } from './outbox.js';
export {
  type ConsumeOptions,
  consumeQueue,
  type QueueConsumer,
  requeueJob,
  UnrecoverableError,
  WaitingError,
} from './queue-workers.js';
export { RateLimiter, type RateLimiterOptions, type RateLimitVerdict } from './rate-limiter.js';
export {
  isReadInputRequired,
  isReadJob,
  type ReadInputRequired,
  type ReadJobData,
  type ReadRequest,
} from './read-jobs.js';
export { closeRedis } from './redis-close.js';
export {
  checkRedisRequirements,
  type RedisProblem,
  RedisRequirementError,
  type RedisServerFacts,
  readRedisFacts,
  redisProblems,
  requirementsMetrics,
} from './redis-requirements.js';
export {
  assertRedisServerAvailable,
  freePort,
  type RedisServer,
  type StartRedisOptions,
  startRedisServer,
} from './redis-server.js';
export { isRedisUnavailable } from './redis-unavailable.js';
export { awaitReplicas } from './replication.js';
export {
  announceResourceUpdated,
  ResourceSubscriptions,
  type ResourceSubscriptionsOptions,
} from './resource-subscriptions.js';
export { ScriptCode } from './script-codes.js';
export { ensureScriptsLoaded, loadScriptSource, SCRIPT_KEY_COUNTS, type ScriptName } from './scripts.js';
export { type FeedEntry, SessionFeed, type SessionFeedOptions } from './session-feed.js';
export {
  type CreateSessionInput,
  isSessionIdShape,
  type LeaseResult,
  newSessionId,
  SESSION_ENDED,
  type SessionRecord,
  SessionStore,
  type SessionStoreOptions,
  STREAM_RESUMED,
} from './session-store.js';
export {
  type CarrierResult,
  compareEntryIds,
  type SessionTask,
  TaskDelivery,
  type TaskDeliveryOptions,
} from './task-delivery.js';
export { DEFAULT_TASK_LIMITS, grantTtl, resolveTaskLimits, type TaskLimits } from './task-limits.js';
export {
  recordFromFields,
  type StoredTask,
  type TaskKind,
  type TaskOutcome,
  type TaskRecord,
  type TaskRef,
  type TaskWire,
  taskRefOf,
  toTask,
} from './task-record.js';
export {
  type CreateTaskInput,
  type TaskObserver,
  type TaskPage,
  TaskStore,
  type TaskStoreOptions,
  type TransitionResult,
} from './task-store.js';
export { observeAll, podName, TaskTrail, type TrailEntry } from './task-trail.js';
export {
  type Attributes,
  bullmqTelemetryOption,
  type Context,
  configureTracing,
  context,
  contextFromCarrier,
  failSpan,
  inSpan,
  redisSpansOn,
  type Span,
  SpanKind,
  SpanStatusCode,
  TRACER_NAME,
  type TraceCarrier,
  trace,
  traceCarrierOf,
  tracer,
} from './telemetry.js';
export { type CatalogEntry, ToolCatalog, type ToolCatalogOptions } from './tool-catalog.js';
export { type ToolJobData, type ToolJobPolicy, ToolQueues, type ToolQueuesOptions } from './tool-queues.js';
export { UriTemplate, type UriVariables } from './uri-template.js';
export { type WorkerInfo, WorkerRegistry } from './worker-registry.js';
