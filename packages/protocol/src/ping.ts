import { z } from 'zod';
import { BaseRequestParamsSchema } from './message-base.js';

/** A liveness check either side may send; the answer is an empty result. */
export const PingRequestSchema = z.object({
  method: z.literal('ping'),
  params: BaseRequestParamsSchema.optional(),
});
/** A `ping` request. */
export type PingRequest = z.infer<typeof PingRequestSchema>;
