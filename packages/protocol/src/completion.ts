import { z } from 'zod';
import { BaseRequestParamsSchema, ResultSchema } from './message-base.js';

// Completion (server utility): argument suggestions for prompts and resource templates.

/** Names a prompt whose argument is being completed. */
export const PromptReferenceSchema = z.object({
  type: z.literal('ref/prompt'),
  name: z.string(),
});
/** A reference to a prompt. */
export type PromptReference = z.infer<typeof PromptReferenceSchema>;

/** Names a resource template (by its URI template) whose variable is being completed. */
export const ResourceTemplateReferenceSchema = z.object({
  type: z.literal('ref/resource'),
  uri: z.string(),
});
/** A reference to a resource template. */
export type ResourceTemplateReference = z.infer<typeof ResourceTemplateReferenceSchema>;

/** Params of `completion/complete`: what to complete, the partial value, and arguments resolved so far. */
export const CompleteRequestParamsSchema = BaseRequestParamsSchema.extend({
  ref: z.union([PromptReferenceSchema, ResourceTemplateReferenceSchema]),
  argument: z.object({ name: z.string(), value: z.string() }),
  context: z.object({ arguments: z.record(z.string(), z.string()).optional() }).optional(),
});
/** Params of `completion/complete`. */
export type CompleteRequestParams = z.infer<typeof CompleteRequestParamsSchema>;

/** Client to server: suggest values for a prompt argument or a template variable. */
export const CompleteRequestSchema = z.object({
  method: z.literal('completion/complete'),
  params: CompleteRequestParamsSchema,
});
/** A `completion/complete` request. */
export type CompleteRequest = z.infer<typeof CompleteRequestSchema>;

/** Most values one completion answer may carry. */
export const MAX_COMPLETION_VALUES = 100;

/** The suggestions: at most 100 values, best first; `total` and `hasMore` tell whether more exist. */
export const CompletionSchema = z.looseObject({
  values: z.array(z.string()).max(MAX_COMPLETION_VALUES),
  total: z.number().int().optional(),
  hasMore: z.boolean().optional(),
});
/** Completion values. */
export type Completion = z.infer<typeof CompletionSchema>;

/** What `completion/complete` returns. */
export const CompleteResultSchema = ResultSchema.extend({
  completion: CompletionSchema,
});
/** The result of `completion/complete`. */
export type CompleteResult = z.infer<typeof CompleteResultSchema>;
