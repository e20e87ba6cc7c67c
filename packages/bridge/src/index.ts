export {
  AmqpConnection,
  type AmqpConnectionOptions,
  AmqpConnections,
  AmqpPublishError,
  type AmqpSetup,
  type PublishOutcome,
} from './amqp/connection.js';
export { type CreateBridgeOptions, createBridge, type TaskgateBridge } from './bridge.js';
export { BridgeMetrics } from './bridge-metrics.js';
export {
  type BridgeConfig,
  BridgeConfigError,
  type BridgedToolConfig,
  type ConnectionConfig,
  DEFAULT_REPLY_QUEUE,
  isAmqpConnection,
  loadBridgeConfig,
  parseBridgeConfig,
} from './config.js';
