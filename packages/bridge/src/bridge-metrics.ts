import { counterIn, gaugeIn } from '@taskgate/core';
import type { Counter, Gauge, Registry } from 'prom-client';

/** The bridge's own metrics; labels are the configured tool names and queues (a bounded set). */
export class BridgeMetrics {
  readonly handedOff: Counter<'tool'>;
  readonly applied: Counter<'tool' | 'outcome'>;
  readonly eventLag: Gauge<'queue'>;

  constructor(registry: Registry) {
    this.handedOff = counterIn(registry, {
      name: 'taskgate_bridge_jobs_handed_off_total',
      help: 'Jobs the bridge added to existing queues (one per task; a repeated hand-off adds nothing)',
      labelNames: ['tool'],
    });
    this.applied = counterIn(registry, {
      name: 'taskgate_bridge_completions_applied_total',
      help: 'Finished jobs of existing queues whose outcome the bridge handed to their tasks',
      labelNames: ['tool', 'outcome'],
    });
    this.eventLag = gaugeIn(registry, {
      name: 'taskgate_bridge_event_lag_seconds',
      help: "How far behind the queue's event stream the bridge applied its last event",
      labelNames: ['queue'],
    });
  }
}
