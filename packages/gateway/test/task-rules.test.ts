import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { MODEL_IMMEDIATE_RESPONSE_META_KEY } from '@taskgate/protocol';
import { connectClient, sleepMs, useRedis, waitFor } from '@taskgate/test-harness';
import { TEST_TOOLS } from '@taskgate/test-harness/tools';
import { defineTool } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rejection } from './support/rejection.js';
import { useStacks } from './support/stack.js';

async function createTask(client: Client, name: string, args: Record<string, unknown>, ttl?: number): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: ttl === undefined ? {} : { ttl } } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

describe('task negotiation and retention rules', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('[CAP-5][ERR-2] declares tasks for tools/call and refuses a plain call of a task-only tool, asking for augmentation', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    expect(client.getServerCapabilities()?.tasks?.requests?.tools?.call).toEqual({});
    const refused = await rejection(
      client.request(
        { method: 'tools/call', params: { name: 'report', arguments: { pages: 1 } } },
        CallToolResultSchema,
      ),
    );
    // ERR-2's wording; the code is -32601 because the requirement is the tool's (TOOL-5 makes that a MUST),
    // not the whole request type's.
    expect(refused.code).toBe(-32601);
    expect(refused.message).toMatch(/Task augmentation required for tools\/call requests: tool 'report'/);
    // Only that tool insists: other tools of the same request type still run without a task.
    expect(await client.callTool({ name: 'sleep', arguments: { ms: 1 } })).toEqual({
      content: [{ type: 'text', text: 'slept 1 ms' }],
    });
  });

  it('[CNL-4] keeps a cancelled task retrievable until its ttl ends; cancelling deletes nothing', async () => {
    const stack = await start({ gateway: { limits: { minTtlMs: 100, pollIntervalMs: 100 } } });
    const { client } = await connectClient(stack.url);
    const taskId = await createTask(client, 'sleep', { ms: 30_000 }, 1500);
    await client.experimental.tasks.cancelTask(taskId);
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'cancelled', ttl: 1500 });
    expect((await client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).toContain(taskId);
    const result = await rejection(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema));
    expect(result).toEqual({
      code: -32603,
      message: 'MCP error -32603: Task was cancelled: The task was cancelled by request.',
      data: { taskId, status: 'cancelled' },
    });
    // The receiver deletes it once its ttl has run out (TTL-2), whatever its status.
    await sleepMs(1500);
    await waitFor(async () => {
      const gone = await rejection(client.experimental.tasks.getTask(taskId));
      return gone.code === -32602;
    }, 'the cancelled task to expire');
    expect((await client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).not.toContain(taskId);
  });

  it("[CRT-5] adds the tool's model-immediate-response to its CreateTaskResult, and nothing for other tools", async () => {
    const slow = defineTool({
      name: 'slow_report',
      description: 'Takes a while',
      inputSchema: z.object({}),
      taskSupport: 'required',
      immediateResponse: 'The report is being written; it takes about a minute.',
      handler: () => 'done',
    });
    const stack = await start({ tools: [...TEST_TOOLS, slow] });
    const { client } = await connectClient(stack.url);
    const created = await client.request(
      { method: 'tools/call', params: { name: 'slow_report', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    expect(created._meta).toEqual({
      [MODEL_IMMEDIATE_RESPONSE_META_KEY]: 'The report is being written; it takes about a minute.',
    });
    expect(await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: 'done' }],
    });
    const plain = await client.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 1 }, task: {} } },
      CreateTaskResultSchema,
    );
    expect(plain._meta).toBeUndefined();
  });
});
