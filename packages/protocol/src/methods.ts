import { z } from 'zod';
import { CompleteRequestSchema } from './completion.js';
import { describeIssues } from './describe-issues.js';
import { InitializedNotificationSchema, InitializeRequestSchema } from './initialize.js';
import { SetLevelRequestSchema } from './logging.js';
import { CancelledNotificationSchema, ProgressNotificationSchema } from './notifications.js';
import { PingRequestSchema } from './ping.js';
import { GetPromptRequestSchema, ListPromptsRequestSchema } from './prompts.js';
import { ProtocolError } from './protocol-error.js';
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from './resources.js';
import {
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  TaskStatusNotificationSchema,
  type UpdateTaskRequestParams,
  UpdateTaskRequestParamsSchema,
} from './task-messages.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from './tools.js';

/** Every request method the broker answers, with the schema of its `{ method, params }`. */
export const ClientRequestSchemas = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  'logging/setLevel': SetLevelRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
  'tasks/get': GetTaskRequestSchema,
  'tasks/result': GetTaskPayloadRequestSchema,
  'tasks/list': ListTasksRequestSchema,
  'tasks/cancel': CancelTaskRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/templates/list': ListResourceTemplatesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
  'resources/subscribe': SubscribeRequestSchema,
  'resources/unsubscribe': UnsubscribeRequestSchema,
  'prompts/list': ListPromptsRequestSchema,
  'prompts/get': GetPromptRequestSchema,
  'completion/complete': CompleteRequestSchema,
} as const;
/** A request method the broker answers. */
export type ClientRequestMethod = keyof typeof ClientRequestSchemas;
/** The params schema of a client request method (optional where the method's params are). */
export type ClientRequestParamsSchema<M extends ClientRequestMethod> =
  (typeof ClientRequestSchemas)[M]['shape']['params'];
/** The parsed params of a client request method. */
export type ClientRequestParams<M extends ClientRequestMethod> = z.infer<ClientRequestParamsSchema<M>>;

/** Any request the broker answers, told apart by `method`. */
export const ClientRequestSchema = z.discriminatedUnion('method', [
  InitializeRequestSchema,
  PingRequestSchema,
  SetLevelRequestSchema,
  ListToolsRequestSchema,
  CallToolRequestSchema,
  GetTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  ListTasksRequestSchema,
  CancelTaskRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  ListPromptsRequestSchema,
  GetPromptRequestSchema,
  CompleteRequestSchema,
]);
/** A request the broker answers. */
export type ClientRequest = z.infer<typeof ClientRequestSchema>;

/** Every notification the broker accepts from clients, with the schema of its `{ method, params }`. */
export const ClientNotificationSchemas = {
  'notifications/initialized': InitializedNotificationSchema,
  'notifications/cancelled': CancelledNotificationSchema,
  'notifications/progress': ProgressNotificationSchema,
  'notifications/tasks/status': TaskStatusNotificationSchema,
} as const;
/** A notification method the broker accepts from clients. */
export type ClientNotificationMethod = keyof typeof ClientNotificationSchemas;

/** True when the broker answers `method`. */
export function isClientRequestMethod(method: string): method is ClientRequestMethod {
  return Object.hasOwn(ClientRequestSchemas, method);
}

/** The params schema for a request method the broker answers, or `undefined` for any other method. */
export function clientRequestParamsSchema<M extends ClientRequestMethod>(method: M): ClientRequestParamsSchema<M>;
export function clientRequestParamsSchema(method: string): z.ZodType | undefined;
export function clientRequestParamsSchema(method: string): z.ZodType | undefined {
  return isClientRequestMethod(method) ? ClientRequestSchemas[method].shape.params : undefined;
}

/**
 * Validates the params of a client request. Throws -32601 for a method the broker does not answer and
 * -32602, naming the offending member, when the params do not fit the method.
 */
export function parseClientRequestParams<M extends ClientRequestMethod>(
  method: M,
  params: unknown,
): ClientRequestParams<M>;
export function parseClientRequestParams(method: string, params: unknown): unknown;
export function parseClientRequestParams(method: string, params: unknown): unknown {
  const schema = clientRequestParamsSchema(method);
  if (schema === undefined) {
    throw ProtocolError.methodNotFound(`Method not found: ${method}`);
  }
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  throw ProtocolError.invalidParams(`Invalid params for ${method}: ${describeIssues(parsed.error, 'params')}`);
}

/** Validates the params of `tasks/update` (revision 2026-07-28): -32602 naming the offending member. */
export function parseUpdateTaskParams(params: unknown): UpdateTaskRequestParams {
  const parsed = UpdateTaskRequestParamsSchema.safeParse(params);
  if (parsed.success) return parsed.data;
  throw ProtocolError.invalidParams(`Invalid params for tasks/update: ${describeIssues(parsed.error, 'params')}`);
}
