import { z } from 'zod';
import { ClientCapabilitiesSchema, ServerCapabilitiesSchema } from './capabilities.js';
import { ImplementationSchema } from './implementation.js';
import { BaseNotificationParamsSchema, BaseRequestParamsSchema, ResultSchema } from './message-base.js';

/** Params of `initialize`: the client's newest protocol version, its capabilities and identity. */
export const InitializeRequestParamsSchema = BaseRequestParamsSchema.extend({
  protocolVersion: z.string(),
  capabilities: ClientCapabilitiesSchema,
  clientInfo: ImplementationSchema,
});
/** Params of `initialize`. */
export type InitializeRequestParams = z.infer<typeof InitializeRequestParamsSchema>;

/** The first request of a session, client to server. */
export const InitializeRequestSchema = z.object({
  method: z.literal('initialize'),
  params: InitializeRequestParamsSchema,
});
/** An `initialize` request. */
export type InitializeRequest = z.infer<typeof InitializeRequestSchema>;

/** The server's answer to `initialize`: the version it chose, its capabilities and identity. */
export const InitializeResultSchema = ResultSchema.extend({
  protocolVersion: z.string(),
  capabilities: ServerCapabilitiesSchema,
  serverInfo: ImplementationSchema,
  instructions: z.string().optional(),
});
/** The result of `initialize`. */
export type InitializeResult = z.infer<typeof InitializeResultSchema>;

/** Sent by the client once it has processed the `initialize` result. */
export const InitializedNotificationSchema = z.object({
  method: z.literal('notifications/initialized'),
  params: BaseNotificationParamsSchema.optional(),
});
/** A `notifications/initialized` notification. */
export type InitializedNotification = z.infer<typeof InitializedNotificationSchema>;
