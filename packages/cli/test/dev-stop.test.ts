import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type ForkedProcess, forkNode } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../src/run.ts', import.meta.url));

async function waitFor<T>(what: string, read: () => T | undefined | Promise<T | undefined>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts `taskgate dev` with its private Redis, and a task of `ask_name` waiting for an answer nobody gives. */
async function devWithWaitingTask(dir: string, env: Record<string, string>) {
  const dev = forkNode(cli, ['dev'], { PORT: '0', LOG_LEVEL: 'warn', ...env }, { cwd: dir });
  const url = await waitFor('the endpoint', () => /MCP endpoint\s+(\S+\/mcp)/.exec(dev.output())?.[1]);
  const redisUrl = await waitFor('the Redis URL', () => /Redis\s+(redis:\/\/\S+) \(private/.exec(dev.output())?.[1]);
  const client = new Client({ name: 'dev-stop', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  // The user never answers: the task stays input_required.
  client.setRequestHandler(ElicitRequestSchema, () => new Promise(() => {}));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const stream = client.experimental.tasks.callToolStream({ name: 'ask_name', arguments: {} }, undefined, {
    task: { ttl: 60_000 },
  });
  const iterator = stream[Symbol.asyncIterator]();
  const first = await iterator.next();
  const taskId = first.value?.type === 'taskCreated' ? first.value.task.taskId : '';
  expect(taskId).not.toBe('');
  void (async () => {
    try {
      while (!(await iterator.next()).done) {}
    } catch {
      // The process goes away under it.
    }
  })();
  await waitFor('input_required', async () => {
    const task = await client.experimental.tasks.getTask(taskId);
    return task.status === 'input_required' ? task : undefined;
  });
  return { dev, redisUrl, client };
}

async function redisIsGone(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return false;
  } catch {
    return true;
  } finally {
    probe.disconnect();
  }
}

describe('taskgate dev: Ctrl-C while a task waits for input', () => {
  let dir: string;
  let dev: ForkedProcess | undefined;
  let client: Client | undefined;

  afterEach(async () => {
    void client?.close().catch(() => {});
    await dev?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops within a few seconds, its private Redis included', async () => {
    dir = mkdtempSync(join(tmpdir(), 'taskgate-dev-stop-'));
    let redisUrl: string;
    ({ dev, client, redisUrl } = await devWithWaitingTask(dir, {}));
    const started = Date.now();
    process.kill(dev.pid, 'SIGINT');
    expect(await dev.exited).toBe(0);
    // The drain is 2 s, the aborted tool's grace 1 s: well under the 25 s a deployed worker drains (the bound
    // leaves room for a loaded machine).
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await redisIsGone(redisUrl)).toBe(true);
  }, 240_000);

  it('a second Ctrl-C stops at once, even with a long drain configured', async () => {
    dir = mkdtempSync(join(tmpdir(), 'taskgate-dev-stop-'));
    let redisUrl: string;
    ({ dev, client, redisUrl } = await devWithWaitingTask(dir, { TASKGATE_DRAIN_TIMEOUT_MS: '60000' }));
    process.kill(dev.pid, 'SIGINT');
    await waitFor('the stopping line', () => (dev?.output().includes('stopping') ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(dev.child.exitCode).toBeNull(); // still draining: the configured 60 s
    const second = Date.now();
    process.kill(dev.pid, 'SIGINT');
    expect(await dev.exited).toBe(130);
    expect(Date.now() - second).toBeLessThan(3000);
    expect(dev.output()).toContain('stopped at once');
    await waitFor('Redis to stop', async () => ((await redisIsGone(redisUrl)) ? true : undefined), 10_000);
  }, 240_000);
});
