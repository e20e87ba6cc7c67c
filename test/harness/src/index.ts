export { killOnExit } from './exit-kill.js';
export { type ForkedProcess, forkNode, SOURCE_EXEC_ARGV, trackProcess } from './fork-node.js';
export {
  assertHaproxyAvailable,
  type Haproxy,
  type HaproxyBackend,
  type HaproxyServerState,
  haproxyConfig,
  type StartHaproxyOptions,
  startHaproxy,
} from './haproxy.js';
export {
  connectClient,
  parseSse,
  postHeaders,
  type RawResponse,
  raw,
  rawCall,
  rawInitialize,
  sleepMs,
  taskPages,
  waitFor,
} from './http-client.js';
export { uniquePrefix } from './prefix.js';
export { parsePrometheus, type Sample, type Scrape, scrape } from './prometheus.js';
export { assertRabbitMQAvailable, type RabbitMQ, type StartRabbitMQOptions, startRabbitMQ } from './rabbitmq.js';
export {
  assertRedisClusterAvailable,
  type RedisClusterNode,
  type RedisClusterSet,
  type StartRedisClusterOptions,
  startRedisCluster,
} from './redis-cluster.js';
export { type RedisSentinelSet, startRedisSentinels } from './redis-sentinel.js';
export {
  assertRedisServerAvailable,
  freePort,
  type PersistentRedis,
  type RedisServer,
  type StartRedisOptions,
  startDurableRedis,
  startPersistentRedis,
  startRedis,
} from './redis-server.js';
export {
  type ProxiedRequest,
  type ProxyRoute,
  type RoundRobinProxy,
  startRoundRobinProxy,
} from './round-robin-proxy.js';
export { startTcpRelay, type TcpRelay } from './tcp-relay.js';
export {
  startToxiproxy,
  type Toxic,
  type ToxicType,
  type Toxiproxy,
  type ToxiproxyProxy,
} from './toxiproxy.js';
export { type RedisFixture, useRedis } from './use-redis.js';
