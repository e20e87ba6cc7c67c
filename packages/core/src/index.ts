export { catalogQueues, type QueueStats, queueStats } from './admin/admin-queues.js';
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
} from './admin/admin-tasks.js';
export { type AmqpHandOff, AmqpHandOffs } from './bridge/amqp-hand-offs.js';
export { type AdvanceReply, BridgePositions, type BridgeStream } from './bridge/bridge-positions.js';
export {
  type EventStreamEnds,
  type ExistingJobState,
  ExistingQueue,
  type ExistingQueueAddress,
  type ExistingQueueEvent,
  streamEntryTime,
} from './bridge/bridge-queues.js';
export { CeleryBroker, celeryQueueList, type QueuedCeleryMessage } from './bridge/celery-broker.js';
export { CeleryHandOffs, type HandOffState } from './bridge/celery-hand-offs.js';
export { type CeleryMeta, CeleryResults } from './bridge/celery-results.js';
export { type UpstreamCallRecord, UpstreamCalls } from './bridge/upstream-calls.js';
export { UpstreamSnapshots } from './bridge/upstream-snapshots.js';
export { type Allowed, visibleTo } from './catalog/allow-list.js';
export { announceListChanged, Catalog, type CatalogOptions } from './catalog/catalog.js';
export {
  OfferingCatalog,
  type OfferingCatalogOptions,
  type Offerings,
  type PromptEntry,
  type ResolvedResource,
  type ResourceEntry,
  type ResourceTemplateEntry,
} from './catalog/offering-catalog.js';
export { type CatalogEntry, ToolCatalog, type ToolCatalogOptions } from './catalog/tool-catalog.js';
export { UriTemplate, type UriVariables } from './catalog/uri-template.js';
export { type WorkerInfo, WorkerRegistry } from './catalog/worker-registry.js';
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
export { RateLimiter, type RateLimiterOptions, type RateLimitVerdict } from './limits/rate-limiter.js';
export { DEFAULT_TASK_LIMITS, grantTtl, resolveTaskLimits, type TaskLimits } from './limits/task-limits.js';
export { QUEUE_STATES, type QueueSource, watchQueues } from './metrics/queue-metrics.js';
export { watchRedis } from './metrics/redis-metrics.js';
export { taskMetrics } from './metrics/task-metrics.js';
export {
  CLUSTER_SLOTS,
  crc16,
  MAX_QUEUE_SHARDS,
  queueOfTask,
  queuesOfTask,
  shardOf,
  shardQueues,
  tagSlot,
  validShardCount,
} from './queues/queue-shards.js';
export {
  type ConsumeOptions,
  consumeQueue,
  type QueueConsumer,
  requeueJob,
  UnrecoverableError,
  WaitingError,
} from './queues/queue-workers.js';
export {
  isReadInputRequired,
  isReadJob,
  type ReadInputRequired,
  type ReadJobData,
  type ReadRequest,
} from './queues/read-jobs.js';
export { type ToolJobData, type ToolJobPolicy, ToolQueues, type ToolQueuesOptions } from './queues/tool-queues.js';
export {
  createRedisConnection,
  DEFAULT_COMMAND_TIMEOUT_MS,
  isRedisConnection,
  type RedisConnectionOptions,
  type RedisNode,
  type RedisRole,
  type WaitReplicas,
  waitPolicyOf,
} from './redis/connection.js';
export { type ChannelListener, EventBus, type Unsubscribe } from './redis/event-bus.js';
export { type CatalogKind, Keys } from './redis/keys.js';
export { closeRedis } from './redis/redis-close.js';
export {
  checkRedisRequirements,
  type RedisProblem,
  RedisRequirementError,
  type RedisServerFacts,
  readRedisFacts,
  redisProblems,
  requirementsMetrics,
} from './redis/redis-requirements.js';
export { isRedisUnavailable } from './redis/redis-unavailable.js';
export { awaitReplicas } from './redis/replication.js';
export { ScriptCode } from './redis/script-codes.js';
export { ensureScriptsLoaded, loadScriptSource, SCRIPT_KEY_COUNTS, type ScriptName } from './redis/scripts.js';
export { DirectCalls, type DirectCallsOptions } from './sessions/direct-calls.js';
export { ResourceInterest, type ResourceInterestOptions } from './sessions/resource-interest.js';
export {
  announceResourceUpdated,
  ResourceSubscriptions,
  type ResourceSubscriptionsOptions,
} from './sessions/resource-subscriptions.js';
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
} from './sessions/session-store.js';
export {
  EventLog,
  type EventLogOptions,
  type LoggedEvent,
  type RelayInput,
  type RelayOutcome,
  type StreamKind,
  type StreamState,
} from './streams/event-log.js';
export { GatewayRegistry, type GatewayRegistryOptions, type HeldStream } from './streams/gateway-registry.js';
export {
  type OutboxEntry,
  type OutboxMessage,
  type OutboxRequestMethod,
  TaskOutbox,
  type TaskOutboxOptions,
} from './streams/outbox.js';
export { type FeedEntry, SessionFeed, type SessionFeedOptions } from './streams/session-feed.js';
export {
  type CarrierResult,
  compareEntryIds,
  type SessionTask,
  TaskDelivery,
  type TaskDeliveryOptions,
} from './streams/task-delivery.js';
export { isTaskIdShape, newTaskId } from './tasks/ids.js';
export {
  type InputAnswer,
  InputRequests,
  type InputRequestsOptions,
  InputWaitError,
  type WaitOptions,
} from './tasks/input-requests.js';
export { ListCursorCodec, type ListPosition } from './tasks/list-cursor.js';
export {
  type OwnedOutcome,
  recordFromFields,
  type StoredTask,
  type TaskKind,
  type TaskOutcome,
  type TaskRecord,
  type TaskRef,
  type TaskWire,
  taskRefOf,
  toTask,
} from './tasks/task-record.js';
export {
  type CreateTaskInput,
  type TaskObserver,
  type TaskPage,
  TaskStore,
  type TaskStoreOptions,
  type TransitionResult,
} from './tasks/task-store.js';
export { observeAll, podName, TaskTrail, type TrailEntry } from './tasks/task-trail.js';
export { errorMessage, type LogFn, type Logger, noopLogger } from './telemetry/logger.js';
export {
  BoundedLabel,
  counterIn,
  createMetricsRegistry,
  gaugeIn,
  histogramIn,
  type MetricsRegistryOptions,
  toolLabelOf,
} from './telemetry/metrics-registry.js';
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
} from './telemetry/tracing.js';
