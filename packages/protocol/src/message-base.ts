import { z } from 'zod';
import { RELATED_TASK_META_KEY, RelatedTaskMetadataSchema, TaskMetadataSchema } from './task.js';

/** Ties progress notifications to the request that asked for them; a string or an integer. */
export const ProgressTokenSchema = z.union([z.string(), z.number().int()], {
  error: 'must be a string or an integer',
});
/** A progress token. */
export type ProgressToken = z.infer<typeof ProgressTokenSchema>;

/**
 * `_meta` of any request, notification or result. Open-ended: only the keys MCP itself defines are checked,
 * everything else is kept as sent.
 */
export const RequestMetaSchema = z.looseObject({
  progressToken: ProgressTokenSchema.optional(),
  [RELATED_TASK_META_KEY]: RelatedTaskMetadataSchema.optional(),
});
/** The `_meta` object of a request, notification or result. */
export type RequestMeta = z.infer<typeof RequestMetaSchema>;

/** Params every request may carry; method-specific params extend this. */
export const BaseRequestParamsSchema = z.object({
  _meta: RequestMetaSchema.optional(),
});
/** Params every request may carry. */
export type BaseRequestParams = z.infer<typeof BaseRequestParamsSchema>;

/** Params of a request type that may be task-augmented via `params.task` (CRT-1). */
export const TaskAugmentedRequestParamsSchema = BaseRequestParamsSchema.extend({
  task: TaskMetadataSchema.optional(),
});
/** Params of a request type that may be task-augmented. */
export type TaskAugmentedRequestParams = z.infer<typeof TaskAugmentedRequestParamsSchema>;

/** Params every notification may carry; method-specific params extend this. */
export const BaseNotificationParamsSchema = z.object({
  _meta: RequestMetaSchema.optional(),
});
/** Params every notification may carry. */
export type BaseNotificationParams = z.infer<typeof BaseNotificationParamsSchema>;

/** Any result: an object whose unknown members are kept, since results are forwarded verbatim. */
export const ResultSchema = z.looseObject({
  _meta: RequestMetaSchema.optional(),
});
/** Any result object. */
export type Result = z.infer<typeof ResultSchema>;

/** The result of `ping` and other requests that return nothing: only `_meta` is allowed. */
export const EmptyResultSchema = ResultSchema.strict();
/** A result with no members besides `_meta`. */
export type EmptyResult = z.infer<typeof EmptyResultSchema>;
