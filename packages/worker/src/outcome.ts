import type { StoredResult } from '@taskgate/core';
import { type CallToolResult, CallToolResultSchema, ProtocolError } from '@taskgate/protocol';
import type { AnyToolDefinition } from './define-tool.js';
import { ToolOutputError } from './errors.js';
import { describeZodIssues } from './zod-issues.js';

/** A finished task's outcome with the status message that goes with it. */
export interface Finished {
  readonly outcome: StoredResult;
  readonly statusMessage?: string;
}

/** A tool error: a CallToolResult with `isError: true` holding `text` (the task ends `failed`, ERR-4/ERR-5). */
export function toolError(text: string): Finished {
  return {
    outcome: { result: { content: [{ type: 'text', text }], isError: true } },
    statusMessage: `Tool failed: ${text}`,
  };
}

/** A thrown ProtocolError becomes the JSON-RPC error that `tasks/result` returns (ERR-5). */
export function protocolErrorOutcome(error: ProtocolError): Finished {
  return { outcome: { error: error.toJSON() }, statusMessage: error.message };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Maps what a handler returned to the stored outcome: a string → text content; a CallToolResult (an object
 * with a `content` array) → as is; another object → `structuredContent` (validated against the outputSchema)
 * plus its JSON as text, or just the JSON text when the tool has no outputSchema; nothing → no content.
 * Throws ToolOutputError when the value breaks the tool's contract.
 */
export function resultOutcome(def: AnyToolDefinition, value: unknown): Finished {
  if (typeof value === 'string') return { outcome: { result: { content: [{ type: 'text', text: value }] } } };
  if (value === undefined || value === null) return { outcome: { result: { content: [] } } };
  if (isRecord(value) && Array.isArray(value.content)) return callToolResultOutcome(def, value);
  if (isRecord(value) && def.outputSchema !== undefined) {
    const parsed = def.outputSchema.safeParse(value);
    if (!parsed.success) {
      throw new ToolOutputError(
        `The tool's output does not match its outputSchema: ${describeZodIssues(parsed.error)}`,
      );
    }
    const structuredContent = parsed.data as Record<string, unknown>;
    return {
      outcome: { result: { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent } },
    };
  }
  const text = JSON.stringify(value);
  if (text === undefined) throw new ToolOutputError(`The tool returned a ${typeof value}, which is not JSON`);
  return { outcome: { result: { content: [{ type: 'text', text }] } } };
}

function callToolResultOutcome(def: AnyToolDefinition, value: Record<string, unknown>): Finished {
  const parsed = CallToolResultSchema.safeParse(value);
  if (!parsed.success)
    throw new ToolOutputError(`The tool returned an invalid CallToolResult: ${describeZodIssues(parsed.error)}`);
  const result: CallToolResult = parsed.data;
  if (result.isError === true) {
    const text = result.content.find((block) => block.type === 'text')?.text;
    return { outcome: { result: value }, statusMessage: `Tool failed: ${text ?? 'the tool reported an error'}` };
  }
  if (def.outputSchema !== undefined) {
    // MCP: a tool with an outputSchema must return conforming structuredContent in every successful result.
    const structured = def.outputSchema.safeParse(result.structuredContent);
    if (!structured.success) {
      throw new ToolOutputError(
        `The tool's structuredContent does not match its outputSchema: ${describeZodIssues(structured.error)}`,
      );
    }
  }
  return { outcome: { result: value } };
}

/** True for a ProtocolError, even one from another copy of the protocol package. */
export function isProtocolError(error: unknown): error is ProtocolError {
  return (
    error instanceof ProtocolError ||
    (error instanceof Error &&
      error.name === 'ProtocolError' &&
      typeof (error as { code?: unknown }).code === 'number' &&
      typeof (error as { toJSON?: unknown }).toJSON === 'function')
  );
}
