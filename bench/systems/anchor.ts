import { freePort } from '@taskgate/dev-redis';
import { LeanSubject } from '../lib/lean-client.js';
import { type BenchProcess, type ProcessSet, waitForLog } from '../lib/processes.js';
import { McpSubject } from './mcp-subject.js';

/** The anchor server process (the official SDK with InMemoryTaskStore) and the subject that drives it. */
export interface AnchorSystem {
  readonly process: BenchProcess;
  readonly subject: McpSubject;
  readonly lean: LeanSubject;
}

/** Starts `bench/fixtures/anchor-server.ts` on a free port and waits until it serves. */
export async function startAnchor(processes: ProcessSet, root: string): Promise<AnchorSystem> {
  const port = await freePort();
  const proc = processes.spawnNode('anchor', `${root}bench/fixtures/anchor-server.ts`, [], { PORT: String(port) });
  await waitForLog(proc, /anchor listening on/);
  const subject = new McpSubject('anchor', `http://127.0.0.1:${port}/mcp`, [proc.pid]);
  processes.add('anchor clients', () => subject.close());
  const lean = new LeanSubject('anchor', `http://127.0.0.1:${port}/mcp`, [proc.pid]);
  processes.add('anchor lean client', () => lean.destroy());
  return { process: proc, subject, lean };
}
