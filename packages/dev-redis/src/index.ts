export { freePort } from './free-port.js';
export {
  assertRedisServerAvailable,
  type RedisServer,
  type StartRedisOptions,
  startRedisServer,
} from './redis-server.js';
