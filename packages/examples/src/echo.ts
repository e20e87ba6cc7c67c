import { defineTool } from '@taskgate/worker';
import { z } from 'zod';

/** Returns its text; always a plain call, never a task. */
export const echo = defineTool({
  name: 'echo',
  title: 'Echo',
  description: 'Returns the given text unchanged.',
  inputSchema: z.object({ text: z.string().describe('Text to return') }),
  taskSupport: 'forbidden',
  concurrency: 10,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ text }) => text,
});
