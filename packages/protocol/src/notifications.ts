import { z } from 'zod';
import { RequestIdSchema } from './jsonrpc.js';
import { BaseNotificationParamsSchema, ProgressTokenSchema } from './message-base.js';

/** Params of `notifications/progress`; the token is the one the request carried in `_meta` (PRG-1). */
export const ProgressNotificationParamsSchema = BaseNotificationParamsSchema.extend({
  progressToken: ProgressTokenSchema,
  /** Should grow with every notification, even when `total` is unknown. */
  progress: z.number(),
  total: z.number().optional(),
  message: z.string().optional(),
});
/** Params of `notifications/progress`. */
export type ProgressNotificationParams = z.infer<typeof ProgressNotificationParamsSchema>;

/** Progress of a long-running request, either direction. */
export const ProgressNotificationSchema = z.object({
  method: z.literal('notifications/progress'),
  params: ProgressNotificationParamsSchema,
});
/** A `notifications/progress` notification. */
export type ProgressNotification = z.infer<typeof ProgressNotificationSchema>;

/**
 * Params of `notifications/cancelled`. `requestId` is optional since 2025-11-25: tasks are cancelled with
 * `tasks/cancel` instead.
 */
export const CancelledNotificationParamsSchema = BaseNotificationParamsSchema.extend({
  requestId: RequestIdSchema.optional(),
  reason: z.string().optional(),
});
/** Params of `notifications/cancelled`. */
export type CancelledNotificationParams = z.infer<typeof CancelledNotificationParamsSchema>;

/** The sender no longer wants the answer to one of its in-flight requests. */
export const CancelledNotificationSchema = z.object({
  method: z.literal('notifications/cancelled'),
  params: CancelledNotificationParamsSchema,
});
/** A `notifications/cancelled` notification. */
export type CancelledNotification = z.infer<typeof CancelledNotificationSchema>;
