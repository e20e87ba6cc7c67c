import { z } from 'zod';
import { BaseRequestParamsSchema, ResultSchema } from './message-base.js';

/** An opaque pagination token; requestors must not parse or alter it (LST-3). */
export const CursorSchema = z.string();
/** An opaque pagination token. */
export type Cursor = z.infer<typeof CursorSchema>;

/** Params of a paginated list request: where to resume. */
export const PaginatedRequestParamsSchema = BaseRequestParamsSchema.extend({
  cursor: CursorSchema.optional(),
});
/** Params of a paginated list request. */
export type PaginatedRequestParams = z.infer<typeof PaginatedRequestParamsSchema>;

/** A page of a list result; `nextCursor` is present when more items remain (LST-2). */
export const PaginatedResultSchema = ResultSchema.extend({
  nextCursor: CursorSchema.optional(),
});
/** A page of a list result. */
export type PaginatedResult = z.infer<typeof PaginatedResultSchema>;
