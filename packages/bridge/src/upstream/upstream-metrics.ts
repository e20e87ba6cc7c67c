import { counterIn, gaugeIn, histogramIn } from '@taskgate/core';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** How an upstream call ended: the outcome label of `taskgate_upstream_calls_total`. */
export type UpstreamCallEnd = 'ok' | 'tool_error' | 'protocol_error' | 'unavailable' | 'failed' | 'cancelled';

/** Metrics of the upstream MCP servers; labels are configured server names (a bounded set). */
export class UpstreamMetrics {
  readonly up: Gauge<'server'>;
  readonly calls: Counter<'server' | 'outcome'>;
  readonly duration: Histogram<'server'>;

  constructor(registry: Registry) {
    this.up = gaugeIn(registry, {
      name: 'taskgate_upstream_up',
      help: 'Whether the bridge has a working session with the upstream MCP server (1) or not (0)',
      labelNames: ['server'],
    });
    this.calls = counterIn(registry, {
      name: 'taskgate_upstream_calls_total',
      help: 'tools/call requests the bridge made to upstream MCP servers, by how they ended',
      labelNames: ['server', 'outcome'],
    });
    this.duration = histogramIn(registry, {
      name: 'taskgate_upstream_call_duration_seconds',
      help: 'Time from the upstream tools/call to its result (the whole upstream task for task calls)',
      labelNames: ['server'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600],
    });
  }
}
