import { errorMessage, type Logger, noopLogger } from '@taskgate/core';
import { WORKER_DEFAULTS } from './defaults.js';

export interface ShutdownOptions {
  /** How long running jobs may take to finish before they are aborted and released (ms, default 25 000). */
  readonly deadlineMs?: number;
  readonly signals?: readonly NodeJS.Signals[];
  readonly logger?: Logger;
  /** Ends the process (default `process.exit`); tests and embedders may pass their own. */
  readonly exit?: (code: number) => void;
}

/** Extra time after the deadline for aborted handlers to release their jobs and connections to close. */
const CLOSE_MARGIN_MS = 10_000;

/**
 * Graceful shutdown on SIGTERM/SIGINT: stop taking jobs, let running ones finish until `deadlineMs`, abort
 * and release the rest, close, exit 0. A second signal, or a close that overruns the margin, exits 1 at once.
 * Returns a function that removes the handlers.
 */
export function handleShutdownSignals(
  worker: { close(options?: { readonly deadlineMs?: number }): Promise<void> },
  options: ShutdownOptions = {},
): () => void {
  const logger = options.logger ?? noopLogger;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const deadlineMs = options.deadlineMs ?? WORKER_DEFAULTS.drainTimeoutMs;
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let stopping = false;

  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      exit(1);
      return;
    }
    stopping = true;
    logger.info({ signal, deadlineMs }, 'shutting down: draining running jobs');
    const overrun = setTimeout(() => {
      logger.error({}, 'shutdown overran its deadline: exiting');
      exit(1);
    }, deadlineMs + CLOSE_MARGIN_MS);
    overrun.unref();
    worker.close({ deadlineMs }).then(
      () => {
        clearTimeout(overrun);
        exit(0);
      },
      (error: unknown) => {
        clearTimeout(overrun);
        logger.error({ err: errorMessage(error) }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}
