import { counterIn, gaugeIn, toolLabelOf, WaitingError } from '@taskgate/core';
import type { Registry } from 'prom-client';
import { RecordedFailure } from './run-job.js';

/** How one execution of a job ended, as `taskgate_job_executions_total` labels it. */
export type ExecutionEnd = 'done' | 'failed' | 'released' | 'error';

/** The outcome label of an execution: returned (`done`), failed for good, released to the queue, or thrown (retry). */
export function executionOutcome(error: unknown): ExecutionEnd {
  if (error === undefined) return 'done';
  if (error instanceof RecordedFailure) return 'failed';
  if (error instanceof WaitingError) return 'released';
  return 'error';
}

/** The worker's own metrics (task lifecycle metrics come from the task store, Redis and queues from core). */
export class WorkerMetrics {
  readonly #inFlight;
  readonly #executions;
  readonly #draining;
  readonly #tools;

  constructor(readonly registry: Registry) {
    this.#tools = toolLabelOf(registry);
    this.#inFlight = gaugeIn(registry, {
      name: 'taskgate_tasks_in_flight',
      help: 'Tool executions running in this worker, by tool.',
      labelNames: ['tool'],
    });
    this.#executions = counterIn(registry, {
      name: 'taskgate_job_executions_total',
      help: 'Job executions, by tool and outcome (done, failed: stored as failed; released: back to the queue; error: BullMQ retries or fails it).',
      labelNames: ['tool', 'outcome'],
    });
    this.#draining = gaugeIn(registry, {
      name: 'taskgate_worker_draining',
      help: '1 while the worker shuts down (takes no new jobs, lets running ones finish).',
    });
    this.#draining.set(0);
  }

  /** Runs one execution, counted in flight while it runs and by outcome when it ends. */
  async execution<T>(tool: string, run: () => Promise<T>): Promise<T> {
    const label = this.#tools.value(tool);
    this.#inFlight.inc({ tool: label });
    let failure: unknown;
    try {
      return await run();
    } catch (error) {
      failure = error ?? new Error('thrown without a value');
      throw error;
    } finally {
      this.#inFlight.dec({ tool: label });
      this.#executions.inc({ tool: label, outcome: executionOutcome(failure) });
    }
  }

  draining(): void {
    this.#draining.set(1);
  }
}
