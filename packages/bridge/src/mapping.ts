import type { CallToolResult } from '@taskgate/protocol';
import type { BridgedToolConfig } from './config.js';

/** What maps a finished job's value to a result: the same for every kind of bridged tool. */
export type ResultConfig = Pick<BridgedToolConfig, 'result' | 'outputSchema'>;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at a "$.a.b" path of the arguments ("$" alone: all of them); undefined when absent. */
function pick(args: Record<string, unknown>, path: string): unknown {
  let value: unknown = args;
  for (const part of path.slice(1).split('.').filter(Boolean)) {
    if (!isRecord(value)) return undefined;
    value = value[part];
  }
  return value;
}

export function mapValue(template: unknown, args: Record<string, unknown>): unknown {
  if (typeof template === 'string' && (template === '$' || template.startsWith('$.'))) return pick(args, template);
  if (Array.isArray(template)) return template.map((item) => mapValue(item, args));
  if (isRecord(template)) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(template)) {
      const mapped = mapValue(value, args);
      if (mapped !== undefined) out[key] = mapped;
    }
    return out;
  }
  return template;
}

/** The job data for a call: the arguments as they are, or the configured mapping filled from them. */
export function jobData(tool: BridgedToolConfig, args: Record<string, unknown>): unknown {
  return tool.job.data === 'arguments' ? args : mapValue(tool.job.data, args);
}

function jsonText(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/**
 * A completed job's `returnvalue` as the CallToolResult, per `result`: `auto` — a string becomes text, any
 * other value its JSON text; `text` — a string as is, anything else its JSON; `json` — always the JSON text.
 * With an outputSchema, an object also becomes `structuredContent`.
 */
export function completedResult(tool: ResultConfig, value: unknown): CallToolResult {
  const text = typeof value === 'string' && tool.result !== 'json' ? value : jsonText(value);
  const result: CallToolResult = { content: [{ type: 'text', text }] };
  if (tool.outputSchema !== undefined && isRecord(value)) result.structuredContent = value;
  return result;
}

/** A job that failed after its last attempt, as a tool error carrying BullMQ's `failedReason`. */
export function failedResult(reason: string): CallToolResult {
  return { content: [{ type: 'text', text: reason }], isError: true };
}

/** `job.updateProgress(number | {current, total, message})` as MCP progress. */
export function progressOf(data: unknown): { progress: number; total?: number; message?: string } | undefined {
  if (typeof data === 'number' && Number.isFinite(data)) return { progress: data };
  if (!isRecord(data) || typeof data.current !== 'number') return undefined;
  return {
    progress: data.current,
    ...(typeof data.total === 'number' && { total: data.total }),
    ...(typeof data.message === 'string' && { message: data.message }),
  };
}
