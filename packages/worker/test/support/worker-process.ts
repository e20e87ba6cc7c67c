import { fileURLToPath } from 'node:url';
import { type ForkedProcess, forkNode } from '@taskgate/test-harness';
import type { WorkerEvent } from '../fixtures/tools.js';

const entry = fileURLToPath(new URL('../fixtures/worker-process.ts', import.meta.url));

/** A forked worker process running the fixture tools, with the events it reported so far. */
export interface WorkerProcess {
  readonly process: ForkedProcess;
  readonly pid: number;
  readonly events: WorkerEvent[];
  /** Resolves with the first event (already seen or still to come) that matches. */
  next<T extends WorkerEvent['type']>(
    type: T,
    match?: (event: Extract<WorkerEvent, { type: T }>) => boolean,
    timeoutMs?: number,
  ): Promise<Extract<WorkerEvent, { type: T }>>;
}

/** Forks a worker process and waits until it is ready (tools in the catalog, BullMQ workers running). */
export async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  const child = forkNode(entry, [], env);
  const events: WorkerEvent[] = [];
  const waiters = new Set<() => void>();
  child.child.on('message', (message) => {
    events.push(message as WorkerEvent);
    for (const wake of [...waiters]) wake();
  });
  const next: WorkerProcess['next'] = (type, match, timeoutMs = 15_000) =>
    new Promise((resolve, reject) => {
      const find = () =>
        events.find((event) => event.type === type && (match === undefined || match(event as never))) as
          | Extract<WorkerEvent, { type: typeof type }>
          | undefined;
      const check = (): boolean => {
        const found = find();
        if (found === undefined) return false;
        cleanup();
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`worker ${child.pid}: no '${type}' event within ${timeoutMs} ms\n${child.output()}`));
      }, timeoutMs);
      const onExit = (): void => {
        if (check()) return;
        cleanup();
        reject(new Error(`worker ${child.pid} exited before a '${type}' event\n${child.output()}`));
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        waiters.delete(wake);
        child.child.off('exit', onExit);
      };
      const wake = (): void => void check();
      if (check()) return;
      waiters.add(wake);
      child.child.once('exit', onExit);
    });
  const proc: WorkerProcess = { process: child, pid: child.pid, events, next };
  await next('ready', undefined, 30_000);
  return proc;
}
