export { gatewayOptionsFromEnv, parseTokens } from './env.js';
export { createGateway, type Gateway, type GatewayAddress } from './gateway.js';
export type { AuthFailure, Caller } from './http/auth.js';
export { type LogFn, type Logger, noopLogger } from './logger.js';
export {
  type AuthOptions,
  type GatewayOptions,
  LOOPBACK_HOSTS,
  type ResolvedGatewayOptions,
  resolveGatewayOptions,
} from './options.js';
export { SERVER_CAPABILITIES } from './rpc/initialize.js';
