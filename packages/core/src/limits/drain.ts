/**
 * How long a gateway or worker lets running work finish when it shuts down (ms): a worker's tools, a
 * gateway's plain tool calls. It stays under Kubernetes' 30 s grace period, so a pod drains before it is killed.
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 25_000;
