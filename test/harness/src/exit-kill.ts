import type { ChildProcess } from 'node:child_process';

/** Children still running that the test process kills when it exits; one `exit` listener serves them all. */
const running = new Set<ChildProcess>();

function killAll(): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/**
 * Kills `child` with SIGKILL if it still runs when the test process exits. A test file starts dozens of
 * processes; one shared listener keeps Node's listener count (and its leak warning) out of it.
 */
export function killOnExit(child: ChildProcess): void {
  if (running.size === 0) process.once('exit', killAll);
  running.add(child);
  child.once('exit', () => {
    running.delete(child);
    if (running.size === 0) process.off('exit', killAll);
  });
}
