import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  type ForkedProcess,
  forkNode,
  freePort,
  type RedisServer,
  startRedis,
  uniquePrefix,
} from '@taskgate/test-harness';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The static bearer tokens of the fuzzed gateway and the principals they map to. */
export const FUZZ_TOKENS = { 'fuzz-token-alice-0123456789': 'alice', 'fuzz-token-bob-0123456789': 'bob' } as const;
export type FuzzToken = keyof typeof FUZZ_TOKENS;
/** The MCP endpoint's path and the request body limit the gateway is started with. */
export const FUZZ_PATH = '/mcp';
export const FUZZ_BODY_LIMIT = 64 * 1024;

/** A gateway's heap and resident memory after two forced full garbage collections, in bytes. */
export interface MemorySample {
  readonly heapUsed: number;
  readonly rss: number;
}

/** The fuzzed deployment: a private Redis, one worker and one gateway process (static tokens), all by pid. */
export interface FuzzTarget {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  readonly gateway: ForkedProcess;
  /** Whether the gateway process is still running. */
  alive(): boolean;
  /** Forces garbage collection in the gateway (through its IPC channel) and reads its memory. */
  memory(): Promise<MemorySample>;
  stop(): Promise<void>;
}

async function waitForOutput(proc: ForkedProcess, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = proc.output().match(pattern);
    if (match !== null) return match;
    if (proc.child.exitCode !== null || proc.child.signalCode !== null || Date.now() > deadline) {
      throw new Error(`process ${proc.pid} never printed ${pattern}:\n${proc.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Polls the gateway's /readyz until it answers 200; fails if the process exits first or after 30 s. */
async function waitForReady(proc: ForkedProcess, origin: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = await fetch(`${origin}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    if (proc.child.exitCode !== null || proc.child.signalCode !== null || Date.now() > deadline) {
      throw new Error(`gateway ${proc.pid} did not get ready:\n${proc.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts the deployment. The gateway is the CLI's `taskgate gateway` from sources, with `--expose-gc` and the
 * gc probe preloaded (nothing new in the gateway itself), rate limits and the active-task limit far above what
 * the fuzz reaches (a refusal for those would hide the answer under test), and a small body limit (413 cheap).
 */
export async function startFuzzTarget(label = 'fuzz'): Promise<FuzzTarget> {
  const redis: RedisServer = await startRedis();
  const env = {
    REDIS_URL: redis.url,
    TASKGATE_KEY_PREFIX: uniquePrefix(label),
    TASKGATE_AUTH: 'tokens',
    TASKGATE_TOKENS: Object.entries(FUZZ_TOKENS)
      .map(([token, principal]) => `${token}=${principal}`)
      .join(','),
    TASKGATE_CURSOR_SECRET: 'fuzz-cursor-secret-0123456789abcdef',
    TASKGATE_MAX_BODY_BYTES: String(FUZZ_BODY_LIMIT),
    // Small pages: the fuzz gets real tasks/list cursors from a dozen tasks.
    TASKGATE_PAGE_SIZE: '5',
    TASKGATE_MAX_ACTIVE_TASKS: '1000000',
    TASKGATE_RATE_LIMIT_CREATE: 'off',
    TASKGATE_RATE_LIMIT_READ: 'off',
    TASKGATE_RATE_LIMIT_CANCEL: 'off',
    // Errors only: the fuzz asserts the gateway logged none (an unhandled error or a failed request).
    LOG_LEVEL: 'error',
  };
  const procs: ForkedProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(procs.map((proc) => proc.stop('SIGTERM', 5000)));
    await redis.stop();
  };
  try {
    const worker = forkNode(`${root}bench/fuzz/worker-main.ts`, [], env);
    procs.push(worker);
    const probe = pathToFileURL(`${root}bench/fuzz/gc-probe.mjs`).href;
    const port = await freePort();
    const gateway = forkNode(`${root}packages/cli/src/run.ts`, ['gateway'], {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_OPTIONS: `--expose-gc --import=${probe}`,
    });
    procs.push(gateway);
    const origin = `http://127.0.0.1:${port}`;
    await waitForReady(gateway, origin);
    await waitForOutput(worker, /worker ready/);
    const alive = (): boolean => gateway.child.exitCode === null && gateway.child.signalCode === null;
    const memory = (): Promise<MemorySample> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the gateway did not answer the gc probe')), 10_000);
        gateway.child.once('message', (sample) => {
          clearTimeout(timer);
          resolve(sample as MemorySample);
        });
        gateway.child.send('gc');
      });
    return { url: `${origin}${FUZZ_PATH}`, gateway, alive, memory, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
