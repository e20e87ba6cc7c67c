export {
  cannotCancelTerminal,
  type InternalErrorCode,
  invalidCursor,
  TaskgateError,
  TaskgateErrorCode,
  taskExpired,
  taskLimitExceeded,
  taskNotFound,
} from './errors.js';
export { type ChannelListener, EventBus } from './event-bus.js';
export { EventLog, type EventLogOptions, type LoggedEvent } from './event-log.js';
export { isTaskIdShape, newTaskId } from './ids.js';
export {
  type InputAnswer,
  InputRequests,
  type InputRequestsOptions,
  InputWaitError,
  type WaitOptions,
} from './input-requests.js';
export { Keys } from './keys.js';
export { ListCursorCodec, type ListPosition } from './list-cursor.js';
export { type OutboxEntry, type OutboxMessage, TaskOutbox, type TaskOutboxOptions } from './outbox.js';
export {
  assertRedisServerAvailable,
  freePort,
  type RedisServer,
  type StartRedisOptions,
  startRedisServer,
} from './redis-server.js';
export { ScriptCode } from './script-codes.js';
export { loadScriptSource, SCRIPT_KEY_COUNTS, type ScriptName } from './scripts.js';
export {
  type CreateSessionInput,
  isSessionIdShape,
  type LeaseResult,
  newSessionId,
  SESSION_ENDED,
  type SessionRecord,
  SessionStore,
  type SessionStoreOptions,
} from './session-store.js';
export { DEFAULT_TASK_LIMITS, grantTtl, resolveTaskLimits, type TaskLimits } from './task-limits.js';
export {
  recordFromFields,
  type StoredTask,
  type TaskKind,
  type TaskOutcome,
  type TaskRecord,
  toTask,
} from './task-record.js';
export {
  type CreateTaskInput,
  type TaskPage,
  type TaskRef,
  TaskStore,
  type TaskStoreOptions,
  type TransitionResult,
} from './task-store.js';
export { type CatalogEntry, ToolCatalog, type ToolCatalogOptions } from './tool-catalog.js';
export { type ToolJobData, type ToolJobPolicy, ToolQueues, type ToolQueuesOptions } from './tool-queues.js';
