export { type LogFn, type Logger, noopLogger } from '@taskgate/core';
export type { AuthFailure, Caller } from './auth/caller.js';
export { grantedScopes } from './auth/jwt-auth.js';
export { PROTECTED_RESOURCE_WELL_KNOWN, resourceMetadataUrl } from './auth/protected-resource.js';
export { GATEWAY_DEFAULTS, LOOPBACK_HOSTS } from './defaults.js';
export { createGateway, type Gateway, type GatewayAddress } from './gateway.js';
export { operationOf, type RateLimitedData, rateLimited } from './ops/rate-limits.js';
export {
  type AuthOptions,
  type GatewayOptions,
  type JwtAuthOptions,
  OPERATION_CLASSES,
  type OperationClass,
  type RateLimit,
  type ResolvedGatewayOptions,
  resolveGatewayOptions,
} from './options.js';
export { SERVER_CAPABILITIES } from './wire/rev2025-11-25/initialize.js';
