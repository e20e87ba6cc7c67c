/**
 * Latency sanity check (not a timed test): create → result of a 0 ms task over HTTP, through a real gateway,
 * a real worker and a private redis-server, with the official SDK client.
 *
 *   npm run bench:latency -w @taskgate/gateway -- [runs=200]
 *
 * Prints p50/p90/p99/max of create→result (tools/call with `task`, then a blocking tasks/result) and, for
 * comparison, of a plain call of the same tool.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startRedis, uniquePrefix } from '@taskgate/test-harness';
import { createWorker, defineTool } from '@taskgate/worker';
import { z } from 'zod';
import { createGateway } from '../src/index.js';

const runs = Number(process.argv[2] ?? 200);
const noop = defineTool({
  name: 'noop',
  description: 'Returns at once',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  concurrency: 4,
  handler: () => 'ok',
});

function summary(label: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): string =>
    (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(2);
  const mean = (sorted.reduce((sum, v) => sum + v, 0) / sorted.length).toFixed(2);
  return `${label.padEnd(26)} n=${sorted.length}  mean=${mean}  p50=${at(0.5)}  p90=${at(0.9)}  p99=${at(0.99)}  max=${at(1)}  (ms)`;
}

const redis = await startRedis();
const prefix = uniquePrefix('bench');
// One session makes every call: rate limits off, or the default 120 calls a minute would be the measure.
const gateway = createGateway({
  redis: redis.url,
  keyPrefix: prefix,
  cursorSecret: 'bench-cursor-secret-0123456789',
  rateLimits: {},
});
const worker = createWorker({ redis: redis.url, prefix, tools: [noop] });
try {
  const { url } = await gateway.listen(0, '127.0.0.1');
  await worker.ready;
  const client = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));

  const taskRun = async (): Promise<number> => {
    const started = performance.now();
    const created = await client.request(
      { method: 'tools/call', params: { name: 'noop', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    return performance.now() - started;
  };
  const plainRun = async (): Promise<number> => {
    const started = performance.now();
    await client.callTool({ name: 'noop', arguments: {} });
    return performance.now() - started;
  };
  for (let i = 0; i < 20; i++) await taskRun(); // warm-up: JIT, script loading, connections
  const tasks: number[] = [];
  for (let i = 0; i < runs; i++) tasks.push(await taskRun());
  const plain: number[] = [];
  for (let i = 0; i < runs; i++) plain.push(await plainRun());
  process.stdout.write(`${summary('task create → result', tasks)}\n${summary('plain call → result', plain)}\n`);
  await client.close();
} finally {
  await worker.close({ deadlineMs: 1000 });
  await gateway.close();
  await redis.stop();
}
