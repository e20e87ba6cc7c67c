import type { InputRequests, ListCursorCodec, OfferingCatalog } from '@taskgate/core';
import type { ArgumentValidator } from '../methods/argument-validator.js';
import type { GatewayMetrics } from '../ops/gateway-metrics.js';
import type { RateLimits } from '../ops/rate-limits.js';
import type { StreamQuota } from '../ops/stream-quota.js';
import type { StreamServices } from '../streams/stream-context.js';

/**
 * The composition root: every process-wide piece a gateway builds (`gateway.ts`). The codecs and the HTTP
 * layer hold it and hand each handler and stream what it names (each declares its own services: e.g.
 * `ToolsCallServices`, `StreamServices`). Nothing here is per-session state.
 */
export interface GatewayServices extends StreamServices {
  /** Resources, resource templates and prompts workers offer. */
  readonly offerings: OfferingCatalog;
  readonly inputs: InputRequests;
  readonly validator: ArgumentValidator;
  readonly toolCursors: ListCursorCodec;
  readonly metrics: GatewayMetrics;
  readonly rateLimits: RateLimits;
  /** The per-principal limit of open SSE streams on this gateway. */
  readonly streamQuota: StreamQuota;
}
