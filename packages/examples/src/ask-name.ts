import { defineTool } from '@taskgate/worker';
import { z } from 'zod';

/** Asks the user for their name through elicitation, then greets them. */
export const askName = defineTool({
  name: 'ask_name',
  title: 'Ask name',
  description: 'Asks the user for their name, then greets them.',
  inputSchema: z.object({}),
  taskSupport: 'required',
  concurrency: 10,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async handler(_args, ctx) {
    const answer = await ctx.elicit({
      message: 'What is your name?',
      requestedSchema: {
        type: 'object',
        properties: { name: { type: 'string', title: 'Name', minLength: 1 } },
        required: ['name'],
      },
    });
    const name = answer.action === 'accept' ? answer.content?.name : undefined;
    return typeof name === 'string' && name !== '' ? `Hello, ${name}!` : 'No name given.';
  },
});
