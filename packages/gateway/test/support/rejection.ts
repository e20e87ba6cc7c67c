import { McpError } from '@modelcontextprotocol/sdk/types.js';

/** The JSON-RPC error a request was refused with, as the SDK client saw it; fails when it succeeded. */
export async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) {
      return { code: error.code, message: error.message, ...(error.data !== undefined && { data: error.data }) };
    }
    throw error;
  }
  throw new Error('expected a rejection');
}
