import { z } from 'zod';
import { BaseNotificationParamsSchema, BaseRequestParamsSchema } from './message-base.js';

/** Syslog severities (RFC 5424), least to most severe. */
export const LoggingLevelSchema = z.enum([
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
]);
/** A log severity. */
export type LoggingLevel = z.infer<typeof LoggingLevelSchema>;

/** Params of `logging/setLevel`: the least severe level the client wants to receive. */
export const SetLevelRequestParamsSchema = BaseRequestParamsSchema.extend({
  level: LoggingLevelSchema,
});
/** Params of `logging/setLevel`. */
export type SetLevelRequestParams = z.infer<typeof SetLevelRequestParamsSchema>;

/** Client to server: adjust which log messages the server sends. */
export const SetLevelRequestSchema = z.object({
  method: z.literal('logging/setLevel'),
  params: SetLevelRequestParamsSchema,
});
/** A `logging/setLevel` request. */
export type SetLevelRequest = z.infer<typeof SetLevelRequestSchema>;

/** Params of `notifications/message`. `data` is any JSON value but must be present. */
export const LoggingMessageNotificationParamsSchema = BaseNotificationParamsSchema.extend({
  level: LoggingLevelSchema,
  logger: z.string().optional(),
  data: z.unknown(),
});
/** Params of `notifications/message`. */
export type LoggingMessageNotificationParams = z.infer<typeof LoggingMessageNotificationParamsSchema>;

/** Server to client: one log message. */
export const LoggingMessageNotificationSchema = z.object({
  method: z.literal('notifications/message'),
  params: LoggingMessageNotificationParamsSchema,
});
/** A `notifications/message` notification. */
export type LoggingMessageNotification = z.infer<typeof LoggingMessageNotificationSchema>;
