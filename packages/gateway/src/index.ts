export { type LogFn, type Logger, noopLogger } from '@taskgate/core';
export { createGateway, type Gateway, type GatewayAddress } from './gateway.js';
export type { AuthFailure, Caller } from './http/auth.js';
export { grantedScopes } from './http/jwt-auth.js';
export { PROTECTED_RESOURCE_WELL_KNOWN, resourceMetadataUrl } from './http/protected-resource.js';
export { operationOf, type RateLimitedData, rateLimited } from './limits/rate-limits.js';
export {
  type AuthOptions,
  type GatewayOptions,
  type JwtAuthOptions,
  LOOPBACK_HOSTS,
  OPERATION_CLASSES,
  type OperationClass,
  type RateLimit,
  type ResolvedGatewayOptions,
  resolveGatewayOptions,
} from './options.js';
export { SERVER_CAPABILITIES } from './rpc/initialize.js';
