import type { MethodServices } from '../methods/context.js';
import type { RateLimits } from '../ops/rate-limits.js';
import type { StreamQuota } from '../ops/stream-quota.js';

/**
 * The composition root: every process-wide piece a gateway builds (`gateway.ts`), which the codecs and the
 * HTTP layer hold to hand each handler and stream the pieces it names. Nothing here is per-session state.
 */
export interface GatewayServices extends MethodServices {
  readonly rateLimits: RateLimits;
  /** The per-principal limit of open SSE streams on this gateway. */
  readonly streamQuota: StreamQuota;
}
