import {
  Counter,
  type CounterConfiguration,
  collectDefaultMetrics,
  Gauge,
  type GaugeConfiguration,
  Histogram,
  type HistogramConfiguration,
  Registry,
} from 'prom-client';

export interface MetricsRegistryOptions {
  /**
   * Adds prom-client's Node.js and process metrics (CPU, memory, event-loop lag, GC). Each call installs its
   * own observers, so a process creates one such registry (the CLI does); tests that start many gateways
   * leave it off.
   */
  readonly defaultMetrics?: boolean;
}

/** A Prometheus registry for one process. Gateways and workers register their metrics into the one they get. */
export function createMetricsRegistry(options: MetricsRegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics === true) collectDefaultMetrics({ register: registry });
  return registry;
}

// Get-or-create: a gateway and a worker in one process (`taskgate dev`) share one registry, and both
// declare the task metrics; the first declaration wins and the second gets the same metric.

/** The counter `config.name` of `registry`, created on first use. */
export function counterIn<L extends string>(
  registry: Registry,
  config: Omit<CounterConfiguration<L>, 'registers'>,
): Counter<L> {
  const existing = registry.getSingleMetric(config.name);
  if (existing !== undefined) return existing as Counter<L>;
  return new Counter<L>({ ...config, registers: [registry] });
}

/** The gauge `config.name` of `registry`, created on first use. */
export function gaugeIn<L extends string>(
  registry: Registry,
  config: Omit<GaugeConfiguration<L>, 'registers'>,
): Gauge<L> {
  const existing = registry.getSingleMetric(config.name);
  if (existing !== undefined) return existing as Gauge<L>;
  return new Gauge<L>({ ...config, registers: [registry] });
}

/** The histogram `config.name` of `registry`, created on first use. */
export function histogramIn<L extends string>(
  registry: Registry,
  config: Omit<HistogramConfiguration<L>, 'registers'>,
): Histogram<L> {
  const existing = registry.getSingleMetric(config.name);
  if (existing !== undefined) return existing as Histogram<L>;
  return new Histogram<L>({ ...config, registers: [registry] });
}

/**
 * Keeps a label's value set bounded: the first `max` distinct values pass, later ones become `other`, and
 * values that do not look like names (too long, odd characters) always do. Tool names come from the
 * catalog, which workers write, so a misbehaving deployment must not blow up the series count.
 */
export class BoundedLabel {
  readonly #seen = new Set<string>();

  constructor(readonly max = 200) {}

  /** The label value to use for `value`. */
  value(value: string | undefined): string {
    if (value === undefined || value === '') return 'none';
    if (this.#seen.has(value)) return value;
    if (value.length > 64 || !/^[A-Za-z0-9_.:/-]+$/.test(value) || this.#seen.size >= this.max) return 'other';
    this.#seen.add(value);
    return value;
  }
}

const toolLabels = new WeakMap<Registry, BoundedLabel>();

/** The bounded `tool` label of a registry (shared by every metric that carries a tool name). */
export function toolLabelOf(registry: Registry): BoundedLabel {
  let label = toolLabels.get(registry);
  if (label === undefined) {
    label = new BoundedLabel();
    toolLabels.set(registry, label);
  }
  return label;
}
