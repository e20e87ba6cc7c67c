import { defineTool } from '@taskgate/worker';
import { z } from 'zod';

/** Builds a report page by page, reporting progress and a status message for each page. */
export const report = defineTool({
  name: 'report',
  title: 'Report',
  description: 'Builds a report of the given number of pages, one page every msPerPage milliseconds.',
  inputSchema: z.object({
    pages: z.int().min(1).max(1000).describe('Number of pages'),
    msPerPage: z.int().min(0).max(60_000).default(100).describe('Time per page, in milliseconds'),
  }),
  outputSchema: z.object({ pages: z.int() }),
  taskSupport: 'required',
  concurrency: 10,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async handler({ pages, msPerPage }, ctx) {
    for (let page = 1; page <= pages; page++) {
      await new Promise((resolve) => setTimeout(resolve, msPerPage));
      ctx.signal.throwIfAborted();
      await ctx.setStatusMessage(`page ${page} of ${pages}`);
      await ctx.progress(page, pages, `page ${page} of ${pages}`);
    }
    return { pages };
  },
});
