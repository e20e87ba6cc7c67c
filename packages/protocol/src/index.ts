export { ErrorCode } from './error-codes.js';
export { type JsonRpcErrorObject, ProtocolError, toJsonRpcError } from './protocol-error.js';
export {
  isTerminalStatus,
  MODEL_IMMEDIATE_RESPONSE_META_KEY,
  RELATED_TASK_META_KEY,
  type RelatedTaskMetadata,
  RelatedTaskMetadataSchema,
  type Task,
  type TaskMetadata,
  TaskMetadataSchema,
  TaskSchema,
  type TaskStatus,
  TaskStatusSchema,
  TERMINAL_STATUSES,
  type TerminalTaskStatus,
} from './task.js';
