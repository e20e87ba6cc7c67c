import type { Registry } from 'prom-client';
import type { TaskRecord } from '../tasks/task-record.js';
import type { TaskObserver } from '../tasks/task-store.js';
import { counterIn, histogramIn, toolLabelOf } from '../telemetry/metrics-registry.js';

/** Seconds, from 50 ms to 1 h: tools run from sub-second lookups to long reports. */
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
/** Seconds, from 5 ms to 5 min: how long a job waited for a free worker. */
const WAIT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * Task lifecycle metrics, fed by the task store of every process: tasks are counted where their transition
 * happens (created and cancelled on gateways, completed and failed on workers), exactly once each, because
 * each transition is one Lua script that refuses a second terminal move. Durations use the Redis server's
 * clock (createdAt, lastUpdatedAt), so pods with skewed clocks agree.
 */
export function taskMetrics(registry: Registry): TaskObserver {
  const tools = toolLabelOf(registry);
  const created = counterIn(registry, {
    name: 'taskgate_tasks_created_total',
    help: 'Tasks created, by tool and kind (task: a task-augmented tools/call; direct: a plain tools/call).',
    labelNames: ['tool', 'kind'],
  });
  const finished = counterIn(registry, {
    name: 'taskgate_tasks_finished_total',
    help: 'Tasks that reached a terminal status (completed, failed, cancelled), by tool, kind and status.',
    labelNames: ['tool', 'kind', 'status'],
  });
  const duration = histogramIn(registry, {
    name: 'taskgate_task_duration_seconds',
    help: 'Time from creation to the terminal status, by tool, kind and status.',
    labelNames: ['tool', 'kind', 'status'],
    buckets: DURATION_BUCKETS,
  });
  const wait = histogramIn(registry, {
    name: 'taskgate_task_queue_wait_seconds',
    help: 'Time from creation until a worker started the first attempt, by tool and kind.',
    labelNames: ['tool', 'kind'],
    buckets: WAIT_BUCKETS,
  });
  const seconds = (task: TaskRecord, from: number): number => Math.max(0, task.lastUpdatedAt - from) / 1000;
  return {
    created: (task) => created.inc({ tool: tools.value(task.tool), kind: task.kind }),
    started: (task, attempt) => {
      if (attempt !== 1) return;
      const waited = Math.max(0, (task.startedAt ?? task.lastUpdatedAt) - task.createdAt) / 1000;
      wait.observe({ tool: tools.value(task.tool), kind: task.kind }, waited);
    },
    finished: (task) => {
      const labels = { tool: tools.value(task.tool), kind: task.kind, status: task.status };
      finished.inc(labels);
      duration.observe(labels, seconds(task, task.createdAt));
    },
  };
}
