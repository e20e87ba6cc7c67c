import { ErrorCode, ProtocolError } from '@taskgate/protocol';
import { defineTool } from '@taskgate/worker';
import { z } from 'zod';

/** Ends with a JSON-RPC error, which `tasks/result` then returns as such. */
export const crash = defineTool({
  name: 'crash',
  title: 'Crash',
  description: 'Fails with a JSON-RPC error of the given code and message.',
  inputSchema: z.object({
    code: z.int().default(ErrorCode.InternalError).describe('JSON-RPC error code'),
    message: z.string().optional().describe('Error message'),
  }),
  taskSupport: 'optional',
  concurrency: 10,
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler({ code, message }) {
    throw new ProtocolError(code, message ?? 'The crash tool failed on purpose');
  },
});
