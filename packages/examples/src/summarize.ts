import { defineTool } from '@taskgate/worker';
import { z } from 'zod';

/** Asks the client's model for a summary through sampling and returns its text. */
export const summarize = defineTool({
  name: 'summarize',
  title: 'Summarize',
  description: "Summarizes the given text with the client's language model.",
  inputSchema: z.object({ text: z.string().min(1).describe('Text to summarize') }),
  taskSupport: 'optional',
  concurrency: 10,
  annotations: { readOnlyHint: true, openWorldHint: true },
  async handler({ text }, ctx) {
    const reply = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: `Summarize in one sentence:\n\n${text}` } }],
      maxTokens: 200,
    });
    const content = Array.isArray(reply.content) ? reply.content[0] : reply.content;
    return content?.type === 'text' ? content.text : '';
  },
});
