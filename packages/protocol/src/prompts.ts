import { z } from 'zod';
import { ContentBlockSchema, RoleSchema } from './content.js';
import { IconSchema } from './implementation.js';
import { BaseNotificationParamsSchema, BaseRequestParamsSchema, ResultSchema } from './message-base.js';
import { PaginatedRequestParamsSchema, PaginatedResultSchema } from './pagination.js';

// Prompts (server feature): `prompts/list`, `prompts/get` and the list-changed notification.

/** One argument a prompt accepts; prompt arguments are strings. */
export const PromptArgumentSchema = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  required: z.boolean().optional(),
});
/** A prompt argument. */
export type PromptArgument = z.infer<typeof PromptArgumentSchema>;

/** A prompt (or prompt template) the server offers, as `prompts/list` describes it. */
export const PromptSchema = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  arguments: z.array(PromptArgumentSchema).optional(),
  icons: z.array(IconSchema).optional(),
  _meta: z.looseObject({}).optional(),
});
/** A prompt description. */
export type Prompt = z.infer<typeof PromptSchema>;

/** Client to server: list the prompts, a page at a time. */
export const ListPromptsRequestSchema = z.object({
  method: z.literal('prompts/list'),
  params: PaginatedRequestParamsSchema.optional(),
});
/** A `prompts/list` request. */
export type ListPromptsRequest = z.infer<typeof ListPromptsRequestSchema>;

/** One page of prompts. */
export const ListPromptsResultSchema = PaginatedResultSchema.extend({
  prompts: z.array(PromptSchema),
});
/** The result of `prompts/list`. */
export type ListPromptsResult = z.infer<typeof ListPromptsResultSchema>;

/** Params of `prompts/get`: which prompt, and the values of its arguments (strings). */
export const GetPromptRequestParamsSchema = BaseRequestParamsSchema.extend({
  name: z.string(),
  arguments: z.record(z.string(), z.string()).optional(),
});
/** Params of `prompts/get`. */
export type GetPromptRequestParams = z.infer<typeof GetPromptRequestParamsSchema>;

/** Client to server: render one prompt with its arguments. */
export const GetPromptRequestSchema = z.object({
  method: z.literal('prompts/get'),
  params: GetPromptRequestParamsSchema,
});
/** A `prompts/get` request. */
export type GetPromptRequest = z.infer<typeof GetPromptRequestSchema>;

/** One message of a rendered prompt. */
export const PromptMessageSchema = z.object({
  role: RoleSchema,
  content: ContentBlockSchema,
});
/** A prompt message. */
export type PromptMessage = z.infer<typeof PromptMessageSchema>;

/** What `prompts/get` returns. */
export const GetPromptResultSchema = ResultSchema.extend({
  description: z.string().optional(),
  messages: z.array(PromptMessageSchema),
});
/** The result of `prompts/get`. */
export type GetPromptResult = z.infer<typeof GetPromptResultSchema>;

/** Server to client: the list of prompts changed. */
export const PromptListChangedNotificationSchema = z.object({
  method: z.literal('notifications/prompts/list_changed'),
  params: BaseNotificationParamsSchema.optional(),
});
/** A `notifications/prompts/list_changed` notification. */
export type PromptListChangedNotification = z.infer<typeof PromptListChangedNotificationSchema>;
