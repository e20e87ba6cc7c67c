import { ErrorCode, ProtocolError } from '@taskgate/protocol';
import { defineTool } from '@taskgate/worker';
import { z } from 'zod';
import { pause } from './media.js';

// The tools the tasks-extension scenarios (io.modelcontextprotocol/tasks) name. Which of them run as tasks is
// the server's choice, from `taskSupport`: forbidden = always a plain call, optional = a task when the client
// declares the extension, required = only as a task.

const confirmSchema = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, description: 'Who confirms' },
    confirm: { type: 'boolean' as const, description: 'Go ahead?' },
  },
};

export const greet = defineTool({
  name: 'greet',
  description: 'Greets someone by name, at once.',
  inputSchema: z.object({ name: z.string().default('World') }),
  taskSupport: 'forbidden',
  handler: ({ name }) => `Hello, ${name}!`,
});

export const slowCompute = defineTool({
  name: 'slow_compute',
  description: 'Sleeps `seconds` seconds, then answers; cancelled, it stops.',
  inputSchema: z.object({ seconds: z.number().min(0).max(300).default(1) }),
  taskSupport: 'optional',
  async handler({ seconds }, ctx) {
    await pause(seconds * 1000, ctx.signal);
    return `Computed after ${seconds} second(s).`;
  },
});

export const failingJob = defineTool({
  name: 'failing_job',
  description: 'Runs as a task only; after about a second it reports a tool error (isError).',
  inputSchema: z.object({}),
  taskSupport: 'required',
  async handler(_args, ctx) {
    await pause(1000, ctx.signal);
    throw new Error('failing_job failed on purpose');
  },
});

export const protocolErrorJob = defineTool({
  name: 'protocol_error_job',
  description: 'Ends with a JSON-RPC error instead of a result.',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  async handler(_args, ctx) {
    await pause(100, ctx.signal);
    throw new ProtocolError(ErrorCode.InternalError, 'protocol_error_job failed with a protocol error on purpose');
  },
});

export const confirmDelete = defineTool({
  name: 'confirm_delete',
  description: 'Asks the user to confirm deleting `filename`, then answers what was decided.',
  inputSchema: z.object({ filename: z.string().default('file.txt') }),
  taskSupport: 'optional',
  async handler({ filename }, ctx) {
    const answer = await ctx.elicit({ message: `Delete ${filename}?`, requestedSchema: confirmSchema });
    const confirmed = answer.action === 'accept' && answer.content?.confirm !== false;
    return confirmed ? `Deleted ${filename}.` : `Kept ${filename} (${answer.action}).`;
  },
});

export const multiInput = defineTool({
  name: 'multi_input',
  description: 'Asks two questions at once and answers when both came back.',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  async handler(_args, ctx) {
    const [first, second] = await Promise.all([
      ctx.elicit({ message: 'First question', requestedSchema: confirmSchema }),
      ctx.elicit({ message: 'Second question', requestedSchema: confirmSchema }),
    ]);
    return `Answers: ${JSON.stringify(first.content ?? {})} and ${JSON.stringify(second.content ?? {})}`;
  },
});

export const toolWithTask = defineTool({
  name: 'test_tool_with_task',
  description: 'Runs as a task only: asks for a user name first (before the task exists), then greets that user.',
  inputSchema: z.object({}),
  taskSupport: 'required',
  inputBeforeTask: true,
  async handler(_args, ctx) {
    const answer = await ctx.elicit(
      {
        message: 'What is your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
      { key: 'user_name' },
    );
    const name = typeof answer.content?.name === 'string' ? answer.content.name : 'unknown';
    return `Hello, ${name}! The task finished.`;
  },
});

export const taskTools = [greet, slowCompute, failingJob, protocolErrorJob, confirmDelete, multiInput, toolWithTask];
