export { InputWaitError } from '@taskgate/core';
export { type CreateWorkerOptions, createWorker, type TaskgateWorker } from './create-worker.js';
export {
  type AnyToolDefinition,
  defineTool,
  type RateLimit,
  type ToolConfig,
  type ToolDefinition,
  type ToolReturn,
  toCatalogEntry,
} from './define-tool.js';
export { type AbortKind, ClientCapabilityError, TaskAbortedError, ToolOutputError } from './errors.js';
export { type Logger, type LogMethod, noopLogger } from './logger.js';
export { handleShutdownSignals, type ShutdownOptions } from './shutdown.js';
export type { ToolClient, ToolContext } from './tool-context.js';
