import { z } from 'zod';

/** The shared fields of the execution tests' tools: no arguments, tasks optional. */
export const simple = {
  description: 'Says which tool ran',
  inputSchema: z.object({}),
  taskSupport: 'optional' as const,
};
