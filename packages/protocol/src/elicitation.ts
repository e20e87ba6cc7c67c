import { z } from 'zod';
import { ElicitRequestedSchemaSchema } from './elicitation-schema.js';
import { BaseNotificationParamsSchema, ResultSchema, TaskAugmentedRequestParamsSchema } from './message-base.js';

// A tool-call task that needs an answer from the user sends these with the related-task `_meta` (INP-2).

/** Params of a form-mode `elicitation/create`; a missing `mode` means form. */
export const ElicitRequestFormParamsSchema = TaskAugmentedRequestParamsSchema.extend({
  mode: z.literal('form').optional(),
  message: z.string(),
  requestedSchema: ElicitRequestedSchemaSchema,
});
/** Params of a form-mode elicitation. */
export type ElicitRequestFormParams = z.infer<typeof ElicitRequestFormParamsSchema>;

/** Params of a URL-mode `elicitation/create`: the user completes the interaction out of band at `url`. */
export const ElicitRequestUrlParamsSchema = TaskAugmentedRequestParamsSchema.extend({
  mode: z.literal('url'),
  message: z.string(),
  /** Unique per server; opaque to the client. */
  elicitationId: z.string(),
  url: z.url(),
});
/** Params of a URL-mode elicitation. */
export type ElicitRequestUrlParams = z.infer<typeof ElicitRequestUrlParamsSchema>;

/** Params of `elicitation/create`, either mode. */
export const ElicitRequestParamsSchema = z.union([ElicitRequestFormParamsSchema, ElicitRequestUrlParamsSchema]);
/** Params of `elicitation/create`. */
export type ElicitRequestParams = z.infer<typeof ElicitRequestParamsSchema>;

/** Server to client: ask the user for input. */
export const ElicitRequestSchema = z.object({
  method: z.literal('elicitation/create'),
  params: ElicitRequestParamsSchema,
});
/** An `elicitation/create` request. */
export type ElicitRequest = z.infer<typeof ElicitRequestSchema>;

/** A value the user entered in an elicitation form. */
export const ElicitValueSchema = z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]);
/** A value the user entered. */
export type ElicitValue = z.infer<typeof ElicitValueSchema>;

/**
 * The user's answer. `content` holds the form values on `accept`; clients send `null` for "no content"
 * often enough that it is tolerated.
 */
export const ElicitResultSchema = ResultSchema.extend({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), ElicitValueSchema).nullish(),
});
/** The result of `elicitation/create`. */
export type ElicitResult = z.infer<typeof ElicitResultSchema>;

/** Params of `notifications/elicitation/complete`. */
export const ElicitationCompleteNotificationParamsSchema = BaseNotificationParamsSchema.extend({
  elicitationId: z.string(),
});
/** Params of `notifications/elicitation/complete`. */
export type ElicitationCompleteNotificationParams = z.infer<typeof ElicitationCompleteNotificationParamsSchema>;

/** Server to client: a URL-mode elicitation has been completed out of band. */
export const ElicitationCompleteNotificationSchema = z.object({
  method: z.literal('notifications/elicitation/complete'),
  params: ElicitationCompleteNotificationParamsSchema,
});
/** A `notifications/elicitation/complete` notification. */
export type ElicitationCompleteNotification = z.infer<typeof ElicitationCompleteNotificationSchema>;
