import { WORKER_DEFAULTS as W } from '@taskgate/worker/defaults';
import { z } from 'zod';
import { int, list, type Setting } from './setting-schemas.js';

/** Settings only workers read: their tools, their metrics endpoint and BullMQ timings. */
export const WORKER_SETTINGS = [
  {
    env: 'TASKGATE_TOOLS',
    flag: '--tools',
    scope: 'worker',
    schema: list,
    description: 'Modules whose `tools` (or default) export lists the tools this worker runs, comma-separated.',
  },
  {
    env: 'TASKGATE_BRIDGE_CONFIG',
    flag: '--config',
    scope: 'worker',
    schema: z.string().min(1),
    description:
      '`taskgate bridge` only: YAML file naming the existing BullMQ queues to offer as tools (see the bridge guide).',
  },
  {
    env: 'TASKGATE_METRICS_PORT',
    flag: '--metrics-port',
    scope: 'worker',
    schema: int(0, 65535),
    default: '9464',
    description: "Port of the worker's `/metrics`, `/healthz` and `/readyz`; 0 turns the endpoint off.",
  },
  {
    env: 'TASKGATE_METRICS_HOST',
    flag: '--metrics-host',
    scope: 'worker',
    schema: z.string().min(1),
    default: W.metricsHost,
    description: "Address of the worker's metrics endpoint (0.0.0.0 in containers).",
  },
  {
    env: 'TASKGATE_QUEUE_SHARDS',
    flag: '--queue-shards',
    scope: 'worker',
    schema: int(1, 64),
    default: String(W.queueShards),
    description:
      "BullMQ queues each tool queue spreads over when its tool does not say (`queueShards`), each in a slot of its own: more than 1 lets one hot tool use several Redis Cluster masters. Gateways pick a task's shard from its id; after a change, workers also consume the old shards until they drain.",
  },
  {
    env: 'TASKGATE_WORKER_HEARTBEAT_MS',
    flag: '--worker-heartbeat-ms',
    scope: 'worker',
    schema: int(100),
    default: String(W.heartbeatMs),
    description: 'How often a worker re-announces its tools (keep it well below `TASKGATE_TOOL_STALE_AFTER_MS`).',
  },
  {
    env: 'TASKGATE_LOCK_DURATION_MS',
    flag: '--lock-duration-ms',
    scope: 'worker',
    schema: int(1000),
    default: String(W.lockDurationMs),
    description:
      'BullMQ job lock, renewed every half of it: a task whose worker was killed runs again (or fails) about this plus up to the stalled interval later (`bash scripts/bench --crash`: 9.7-12.6 s with the defaults, 49-56 s with 30000/30000, 6.1-6.7 s with 5000/2500). An event loop blocked longer than half of it, or a Redis outage that long, may lose the lock: the task then counts as crashed.',
  },
  {
    env: 'TASKGATE_STALLED_INTERVAL_MS',
    flag: '--stalled-interval-ms',
    scope: 'worker',
    schema: int(1000),
    default: String(W.stalledIntervalMs),
    description: 'How often BullMQ looks for jobs of crashed workers (one check per queue across all workers).',
  },
  {
    env: 'TASKGATE_STATUS_CHECK_MS',
    flag: '--status-check-ms',
    scope: 'worker',
    schema: int(100),
    default: String(W.statusCheckMs),
    description:
      "Safety-net re-read of running tasks' status (a lost cancel message stops the tool at most this late).",
  },
  {
    env: 'TASKGATE_INPUT_TIMEOUT_MS',
    flag: '--input-timeout-ms',
    scope: 'worker',
    schema: int(1000),
    default: String(W.inputTimeoutMs),
    description: "How long a tool waits for the user's answer to an elicitation or sampling request.",
  },
  {
    env: 'TASKGATE_CLIENT_TASKS',
    flag: '--client-tasks',
    scope: 'worker',
    schema: z.enum(['auto', 'off']),
    default: W.clientTasks,
    description:
      "`auto`: a tool's elicitation or sampling goes to a 2025-11-25 client that declared it as a client task (polled with tasks/get); `off`: only when the tool asks with asTask: true.",
  },
  {
    env: 'TASKGATE_CLIENT_TASK_MIN_POLL_MS',
    flag: '--client-task-min-poll-ms',
    scope: 'worker',
    schema: int(100),
    default: String(W.clientTaskMinPollMs),
    description:
      "The shortest pause between two tasks/get of a client task (a client's shorter pollInterval is raised to it).",
  },
  {
    env: 'TASKGATE_ABORT_GRACE_MS',
    flag: '--abort-grace-ms',
    scope: 'worker',
    schema: int(0),
    default: String(W.abortGraceMs),
    description: 'How long an aborted tool (cancelled, timed out, shutdown) may take to return.',
  },
] as const satisfies readonly Setting[];
