/**
 * The image test's MCP peer (scripts/lib/image-test.sh): the official SDK client creates a task through a gateway
 * (`tools/call` of the example tool `sleep` with `task`), reads its result with `tasks/result`, and checks both;
 * first it waits (60 s at most) until the gateway lists `sleep` and the tool named as its third argument.
 * Exits 0 when they are right; prints what it got and exits 1 otherwise.
 * Run: node --import tsx scripts/lib/image-client.ts <gateway origin> [bearer token] [another tool to wait for]
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [origin, token, listed] = process.argv.slice(2);
if (origin === undefined) throw new Error('usage: image-client.ts <gateway origin> [bearer token] [listed tool]');

// A task of the example tool `sleep` (optional task support), for a number of milliseconds of this run's own.
const ms = 200 + Math.floor(Math.random() * 200);
const text = `slept ${ms} ms`;
const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
const client = new Client({ name: 'taskgate-image-test', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', origin), { requestInit: { headers } }));
/** Waits until the gateway lists every tool named (the workers and the bridge register theirs as they start). */
async function waitForTools(names: readonly string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { tools } = await client.listTools();
    const missing = names.filter((name) => !tools.some((tool) => tool.name === name));
    if (missing.length === 0) return;
    if (Date.now() > deadline) throw new Error(`the gateway never listed ${missing.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

try {
  await waitForTools(listed === undefined ? ['sleep'] : ['sleep', listed]);
  const created = await client.request(
    { method: 'tools/call', params: { name: 'sleep', arguments: { ms }, task: {} } },
    CreateTaskResultSchema,
  );
  const { taskId, status } = created.task;
  const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  const final = await client.experimental.tasks.getTask(taskId);
  const problems: string[] = [];
  if (status !== 'working') problems.push(`created as ${status}, not working`);
  if (final.status !== 'completed') problems.push(`ended ${final.status}, not completed`);
  if (JSON.stringify(result.content) !== JSON.stringify([{ type: 'text', text }])) {
    problems.push(`result ${JSON.stringify(result)}`);
  }
  if (problems.length > 0) {
    process.stderr.write(`task ${taskId}: ${problems.join('; ')}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write(`task ${taskId}: working -> completed, result "${text}"\n`);
  }
} finally {
  await client.close();
}
