import { defineTool } from '@taskgate/worker';
import { z } from 'zod';

/** Ends with a tool error (`isError: true`), so the task ends `failed` with a result. */
export const fail = defineTool({
  name: 'fail',
  title: 'Fail',
  description: 'Fails with the given message, as a tool error result.',
  inputSchema: z.object({ message: z.string().describe('The error message') }),
  taskSupport: 'optional',
  concurrency: 10,
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: ({ message }) => ({ content: [{ type: 'text', text: message }], isError: true }),
});
