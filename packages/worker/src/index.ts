export { InputWaitError, type LogFn, type Logger, noopLogger } from '@taskgate/core';
export { type CreateWorkerOptions, createWorker, type TaskgateWorker } from './create-worker.js';
export { WORKER_DEFAULTS } from './defaults.js';
export {
  type AnyPromptDefinition,
  definePrompt,
  type PromptConfig,
  type PromptDefinition,
  type PromptReturn,
} from './define-prompt.js';
export {
  defineResource,
  defineResourceTemplate,
  type ResourceConfig,
  type ResourceContentsInput,
  type ResourceDefinition,
  type ResourceReturn,
  type ResourceTemplateConfig,
  type ResourceTemplateDefinition,
} from './define-resource.js';
export {
  type AnyToolDefinition,
  DEFAULT_TOOL_CONCURRENCY,
  defineTool,
  type JsonSchemaInput,
  type JsonSchemaToolConfig,
  type RateLimit,
  type ToolConfig,
  type ToolDefinition,
  type ToolReturn,
  toCatalogEntry,
} from './define-tool.js';
export { type AbortKind, ClientCapabilityError, TaskAbortedError, ToolOutputError } from './errors.js';
export type {
  Completer,
  CompletionContext,
  CompletionReturn,
  ReadContext,
  ResourceReadContext,
} from './read-context.js';
export type { AnyResourceDefinition } from './read-server.js';
export { handleShutdownSignals, type ShutdownOptions } from './shutdown.js';
export type { InputOptions, ToolClient, ToolContext } from './tool-context.js';
