import { cpuMs } from './proc-stats.js';

/** Percentiles of a set of samples (ms). */
export interface LatencySummary {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Nearest-rank percentile `q` (0..1) of sorted samples. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** p50, p99, max and mean of samples; NaN everywhere for none (the sanity check catches that). */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.length === 0 ? Number.NaN : sorted.reduce((sum, v) => sum + v, 0) / sorted.length;
  return {
    n: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
    mean,
  };
}

/** What a closed-loop run measured. */
export interface LoadResult extends LatencySummary {
  readonly inFlight: number;
  /** Completed operations per second over the whole run. */
  readonly throughput: number;
  readonly errors: number;
  readonly elapsedMs: number;
  /** Share of samples at or above `slowMs` (the anchor's poll interval), when asked for. */
  readonly slowShare?: number;
  /** CPU time per operation (ms) of the serving processes (servers, workers, Redis), when asked for. */
  readonly serverCpuMs?: number;
  /** CPU time per operation (ms) of the bench process, which runs the clients. */
  readonly clientCpuMs?: number;
  /** CPU time per operation (ms) of each kind of serving process (`LoadOptions.roles`), when asked for. */
  readonly roleCpuMs?: Readonly<Record<string, number>>;
}

export interface LoadOptions {
  /** Operations at once. */
  readonly inFlight: number;
  /** Operations in all (the run stops early at `maxMs`). */
  readonly total: number;
  readonly maxMs: number;
  /** Runs one operation; `lane` (0..inFlight-1) is stable per concurrent loop. */
  readonly run: (lane: number) => Promise<void>;
  /** Count the share of samples at or above this (ms). */
  readonly slowMs?: number;
  /** Serving processes whose CPU time to account per operation. */
  readonly pids?: readonly number[];
  /** The serving processes by kind (gateway, worker, redis), each kind's CPU time accounted on its own. */
  readonly roles?: Readonly<Record<string, readonly number[]>>;
}

/** One stretch of closed-loop load, kept raw so that stretches of the same subject add up (`combine`). */
export interface LoadSlice {
  readonly samples: readonly number[];
  readonly errors: number;
  readonly elapsedMs: number;
  /** CPU time (ms) of the serving processes over the stretch. */
  readonly serverCpu: number;
  /** CPU time (ms) of the bench process over the stretch. */
  readonly clientCpu: number;
  /** CPU time (ms) of each kind of serving process, in the order of `LoadOptions.roles`. */
  readonly roleCpu: readonly number[];
}

/**
 * Closed-loop load: `inFlight` loops each run one operation after another until `total` were started or
 * `maxMs` passed. Latency is per operation; throughput is completed operations over wall time.
 */
export async function closedLoop(options: LoadOptions): Promise<LoadResult> {
  return combine([await loadSlice(options)], options);
}

/** One stretch of `closedLoop`'s load, its figures kept raw. */
export async function loadSlice(options: LoadOptions): Promise<LoadSlice> {
  const samples: number[] = [];
  let started = 0;
  let errors = 0;
  let firstError: unknown;
  const pids = options.pids ?? [];
  const cpuOf = (some: readonly number[]): number => some.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const roles = Object.values(options.roles ?? {});
  const cpu0 = cpuOf(pids);
  const roleCpu0 = roles.map(cpuOf);
  const client0 = process.cpuUsage();
  const begin = performance.now();
  const deadline = begin + options.maxMs;
  const loop = async (lane: number): Promise<void> => {
    while (started < options.total && performance.now() < deadline) {
      started++;
      const t0 = performance.now();
      try {
        await options.run(lane);
        samples.push(performance.now() - t0);
      } catch (error) {
        errors++;
        firstError ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: options.inFlight }, (_, lane) => loop(lane)));
  const elapsedMs = performance.now() - begin;
  const client = process.cpuUsage(client0);
  if (firstError !== undefined) {
    process.stderr.write(`bench: ${errors} operation(s) failed; first: ${String(firstError)}\n`);
  }
  return {
    samples,
    errors,
    elapsedMs,
    serverCpu: cpuOf(pids) - cpu0,
    clientCpu: (client.user + client.system) / 1000,
    roleCpu: roles.map((rolePids, i) => cpuOf(rolePids) - (roleCpu0[i] ?? 0)),
  };
}

/**
 * The figures of one subject's stretches together: latency over all their samples, throughput as their
 * operations over their summed wall time, CPU per operation as their summed CPU time over their operations.
 */
export function combine(
  slices: readonly LoadSlice[],
  options: Omit<LoadOptions, 'run' | 'total' | 'maxMs'>,
): LoadResult {
  const samples = slices.flatMap((slice) => slice.samples);
  const sum = (of: (slice: LoadSlice) => number): number => slices.reduce((total, slice) => total + of(slice), 0);
  const elapsedMs = sum((slice) => slice.elapsedMs);
  const ops = Math.max(1, samples.length);
  const roles = Object.keys(options.roles ?? {});
  return {
    ...summarize(samples),
    inFlight: options.inFlight,
    throughput: (samples.length / elapsedMs) * 1000,
    errors: sum((slice) => slice.errors),
    elapsedMs,
    ...(options.slowMs !== undefined && {
      slowShare: samples.filter((v) => v >= (options.slowMs ?? 0)).length / ops,
    }),
    ...((options.pids ?? []).length > 0 && {
      serverCpuMs: sum((slice) => slice.serverCpu) / ops,
      clientCpuMs: sum((slice) => slice.clientCpu) / ops,
    }),
    ...(roles.length > 0 && {
      roleCpuMs: Object.fromEntries(roles.map((role, i) => [role, sum((slice) => slice.roleCpu[i] ?? 0) / ops])),
    }),
  };
}
