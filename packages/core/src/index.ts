// Core's public surface: only what other packages, tests and benchmarks use, each name by name
// (test/architecture/core-surface.test.ts keeps it so). Internals stay behind it.
export { catalogQueues, queueStats } from './admin/admin-queues.js';
export {
  type AdminCancelResult,
  type AdminTask,
  type AdminTaskDetail,
  type AdminTaskPage,
  type AdminTaskQuery,
  AdminTasks,
  type PurgeProgress,
} from './admin/admin-tasks.js';
export { AmqpHandOffs } from './bridge/amqp-hand-offs.js';
export { type AdvanceReply, BridgePositions, type BridgeStream } from './bridge/bridge-positions.js';
export {
  type ExistingJobState,
  ExistingQueue,
  type ExistingQueueEvent,
  streamEntryTime,
} from './bridge/bridge-queues.js';
export { CeleryBroker, celeryQueueList } from './bridge/celery-broker.js';
export { CeleryHandOffs } from './bridge/celery-hand-offs.js';
export { type CeleryMeta, CeleryResults } from './bridge/celery-results.js';
export { UpstreamCalls } from './bridge/upstream-calls.js';
export { UpstreamSnapshots } from './bridge/upstream-snapshots.js';
export { visibleTo } from './catalog/allow-list.js';
export { announceListChanged } from './catalog/catalog.js';
export {
  OfferingCatalog,
  type Offerings,
  type PromptEntry,
  type ResourceEntry,
  type ResourceTemplateEntry,
} from './catalog/offering-catalog.js';
export { type CatalogEntry, ToolCatalog } from './catalog/tool-catalog.js';
export { UriTemplate, type UriVariables } from './catalog/uri-template.js';
export { WorkerRegistry } from './catalog/worker-registry.js';
export { DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_KEY_PREFIX, DEFAULT_TASK_LIMITS } from './defaults.js';
export { TaskgateError, taskExpired, taskNotFound } from './errors.js';
export { RateLimiter, type RateLimitVerdict } from './limits/rate-limiter.js';
export { resolveTaskLimits, type TaskLimits } from './limits/task-limits.js';
export { watchQueues } from './metrics/queue-metrics.js';
export { watchRedis } from './metrics/redis-metrics.js';
export { taskMetrics } from './metrics/task-metrics.js';
export { MAX_QUEUE_SHARDS, queueOfTask, queuesOfTask, shardOf, shardQueues } from './queues/queue-shards.js';
export {
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
export { type ToolJobData, ToolQueues } from './queues/tool-queues.js';
export {
  createRedisConnection,
  DEFAULT_COMMAND_TIMEOUT_MS,
  isRedisConnection,
  type RedisConnectionOptions,
} from './redis/connection.js';
export { EventBus } from './redis/event-bus.js';
export { type CatalogKind, Keys } from './redis/keys.js';
export { closeRedis } from './redis/redis-close.js';
export { checkRedisRequirements, RedisRequirementError, requirementsMetrics } from './redis/redis-requirements.js';
export { isRedisUnavailable } from './redis/redis-unavailable.js';
export { isReplicationTimeout } from './redis/replication.js';
export { ensureScriptsLoaded, loadScriptSource, SCRIPT_KEY_COUNTS, type ScriptName } from './redis/scripts.js';
export { DirectCalls } from './sessions/direct-calls.js';
export { ResourceInterest } from './sessions/resource-interest.js';
export { announceResourceUpdated, ResourceSubscriptions } from './sessions/resource-subscriptions.js';
export { SessionCache } from './sessions/session-cache.js';
export {
  newSessionId,
  SESSION_ENDED,
  type SessionRecord,
  SessionStore,
  STREAM_RESUMED,
} from './sessions/session-store.js';
export { EventLog, type RelayInput, type RelayReport, type StreamState } from './streams/event-log.js';
export { GatewayRegistry, type HeldStream } from './streams/gateway-registry.js';
export {
  type AskedTogether,
  type OutboxEntry,
  type OutboxMessage,
  type OutboxRequestMethod,
  TaskOutbox,
} from './streams/outbox.js';
export { announcedEntry, type FeedEntry, SessionFeed } from './streams/session-feed.js';
export { compareEntryIds, TaskDelivery } from './streams/task-delivery.js';
export { isTaskIdShape } from './tasks/ids.js';
export { type InputAnswer, InputRequests, InputWaitError } from './tasks/input-requests.js';
export { ListCursorCodec } from './tasks/list-cursor.js';
export type { TaskEnd, TaskWaiter, WaitOutcome } from './tasks/task-follow.js';
export { TaskFollower } from './tasks/task-follower.js';
export { decodeTaskMessage, type TaskChange } from './tasks/task-message.js';
export {
  type OwnedTaskRead,
  recordFromFields,
  type StoredResult,
  type StoredTask,
  type TaskRecord,
  type TaskRef,
  taskRefOf,
  toTask,
} from './tasks/task-record.js';
export { TaskStore } from './tasks/task-store.js';
export { podName, TaskTrail } from './tasks/task-trail.js';
export { errorMessage, type LogFn, type Logger, noopLogger } from './telemetry/logger.js';
export { counterIn, createMetricsRegistry, gaugeIn, histogramIn, toolLabelOf } from './telemetry/metrics-registry.js';
export {
  type Attributes,
  configureTracing,
  context,
  contextFromCarrier,
  failSpan,
  inSpan,
  redisSpansOn,
  type Span,
  SpanKind,
  type TraceCarrier,
  trace,
  traceCarrierOf,
  tracer,
} from './telemetry/tracing.js';
