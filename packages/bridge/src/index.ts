export { type CreateBridgeOptions, createBridge, type TaskgateBridge } from './bridge.js';
export { BridgeMetrics } from './bridge-metrics.js';
export {
  type BridgeConfig,
  BridgeConfigError,
  type BridgedToolConfig,
  loadBridgeConfig,
  parseBridgeConfig,
} from './config.js';
