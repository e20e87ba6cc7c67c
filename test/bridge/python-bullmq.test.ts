import { type ForkedProcess, type RedisServer, startRedis } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../gateway/fixtures/processes.js';
import { type Json, mcpClient, progressOf, terminal } from './mcp-client.js';
import { celeryVenv, startPythonBullmqWorker } from './python-processes.js';
import { forkBridge, removeConfigs, writeConfig } from './support.js';

// A BullMQ worker written in Python (PyPI `bullmq`, pinned; test/bridge/python/worker.py imports only bullmq)
// behind the bridge's BullMQ side, unchanged: results, progress and failures reach the MCP client.

let pods: Pods;
let legacy: RedisServer;
let worker: ForkedProcess;
const client = mcpClient(() => `${pods.proxy.origin}/mcp`);

const config = (url: string) => ({
  connections: { legacy: { url } },
  tools: [
    {
      name: 'py_report',
      description: 'Renders a report in Python.',
      inputSchema: {
        type: 'object',
        properties: { n: { type: 'integer' }, steps: { type: 'integer' }, fail: { type: 'boolean' } },
        required: ['n'],
      },
      outputSchema: { type: 'object', properties: { pages: { type: 'integer' } }, required: ['pages'] },
      queue: { name: 'pyreports', prefix: 'legacy', connection: 'legacy' },
      job: { name: 'render', data: { n: '$.n', steps: '$.steps', stepMs: 100, fail: '$.fail' } },
    },
  ],
});
const resultOf = (messages: Json[]): Json => messages.find((m) => m.id === 7)?.result as Json;
const ran = (taskId: string): number => worker.output().match(new RegExp(`ran ${taskId} `, 'g'))?.length ?? 0;

beforeAll(async () => {
  const [venv, server] = await Promise.all([celeryVenv(), startRedis()]);
  legacy = server;
  const configPath = writeConfig(config(legacy.url));
  // One after the other: started together on a busy machine, the gateways could miss their start deadline.
  pods = await startPods(
    'bridge-python-bullmq',
    { TASKGATE_CURSOR_SECRET: 'bridge-test-cursor-secret-0123456789', TASKGATE_POLL_INTERVAL_MS: '200' },
    (env) => forkBridge(env, configPath),
  );
  worker = await startPythonBullmqWorker(venv, legacy.url, 'pyreports');
}, 300_000);

afterAll(async () => {
  await client.close();
  await worker?.stop('SIGTERM', 5000);
  await pods?.stop();
  await legacy?.stop();
  removeConfigs();
}, 60_000);

describe('bridge: a Python BullMQ worker', () => {
  it('delivers its progress and its result', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'py_report', { n: 4, steps: 3 }, { progressToken: 'py-1' });
    const messages = await (await client.openResult(sid, taskId)).messages();
    expect(progressOf(messages)).toEqual([1, 2, 3].map((step) => ['py-1', step, 3, `page ${step} of 3`]));
    expect(resultOf(messages).structuredContent).toEqual({ pages: 8 });
    expect((await client.task(sid, taskId)).status).toBe('completed');
    expect(ran(taskId)).toBe(1);
  });

  it('ends a job that raised as a tool error with the exception message', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'py_report', { n: 2, fail: true });
    expect((await client.until(sid, taskId, terminal, 'the task to end')).status).toBe('failed');
    const result = (await client.request(sid, 'tasks/result', { taskId })).result as Json;
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'printer jammed on report 2' }], isError: true });
  });
});
