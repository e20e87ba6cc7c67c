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

/**
 * Closed-loop load: `inFlight` loops each run one operation after another until `total` were started or
 * `maxMs` passed. Latency is per operation; throughput is completed operations over wall time.
 */
export async function closedLoop(options: LoadOptions): Promise<LoadResult> {
  const samples: number[] = [];
  let started = 0;
  let errors = 0;
  let firstError: unknown;
  const pids = options.pids ?? [];
  const cpu0 = pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const roles = Object.entries(options.roles ?? {});
  const cpuOf = (rolePids: readonly number[]): number => rolePids.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const roleCpu0 = roles.map(([, rolePids]) => cpuOf(rolePids));
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
  const ops = Math.max(1, samples.length);
  if (firstError !== undefined) {
    process.stderr.write(`bench: ${errors} operation(s) failed; first: ${String(firstError)}\n`);
  }
  return {
    ...summarize(samples),
    inFlight: options.inFlight,
    throughput: (samples.length / elapsedMs) * 1000,
    errors,
    elapsedMs,
    ...(options.slowMs !== undefined && {
      slowShare: samples.filter((v) => v >= (options.slowMs ?? 0)).length / ops,
    }),
    ...(pids.length > 0 && {
      serverCpuMs: (pids.reduce((sum, pid) => sum + cpuMs(pid), 0) - cpu0) / ops,
      clientCpuMs: (client.user + client.system) / 1000 / ops,
    }),
    ...(roles.length > 0 && {
      roleCpuMs: Object.fromEntries(
        roles.map(([role, rolePids], i) => [role, (cpuOf(rolePids) - (roleCpu0[i] ?? 0)) / ops]),
      ),
    }),
  };
}
