import { counterIn, gaugeIn } from '@taskgate/core';
import type { Counter, Gauge, Registry } from 'prom-client';

/** The bridge's own metrics; labels are the configured tool names and queues (a bounded set). */
export class BridgeMetrics {
  readonly handedOff: Counter<'tool'>;
  readonly applied: Counter<'tool' | 'outcome'>;
  readonly eventLag: Gauge<'queue'>;
  readonly amqpPublished: Counter<'tool'>;
  readonly amqpReplies: Counter<'tool'>;
  readonly amqpLateReplies: Counter<'tool'>;
  readonly amqpUnknownReplies: Counter<'connection'>;
  readonly amqpUnroutable: Counter<'tool'>;

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
    this.amqpPublished = counterIn(registry, {
      name: 'taskgate_bridge_amqp_published_total',
      help: 'Requests of amqp tools the broker confirmed (one per task; a hand-off the record shows done is not repeated)',
      labelNames: ['tool'],
    });
    this.amqpReplies = counterIn(registry, {
      name: 'taskgate_bridge_amqp_replies_total',
      help: 'Replies of amqp tools applied to their tasks',
      labelNames: ['tool'],
    });
    this.amqpLateReplies = counterIn(registry, {
      name: 'taskgate_bridge_amqp_late_replies_total',
      help: 'Replies of amqp tools that came after their task ended (cancelled, timed out, answered) and were discarded',
      labelNames: ['tool'],
    });
    this.amqpUnknownReplies = counterIn(registry, {
      name: 'taskgate_bridge_amqp_unknown_replies_total',
      help: 'Messages in a reply queue whose correlation_id names no request of the bridge; dropped',
      labelNames: ['connection'],
    });
    this.amqpUnroutable = counterIn(registry, {
      name: 'taskgate_bridge_amqp_unroutable_total',
      help: 'Requests of amqp tools the broker returned because no queue was bound to their routing key',
      labelNames: ['tool'],
    });
  }
}
