import {
  type CompleteResult,
  type GetPromptResult,
  GetPromptResultSchema,
  MAX_COMPLETION_VALUES,
  type ReadResourceResult,
  ReadResourceResultSchema,
} from '@taskgate/protocol';
import type { PromptReturn } from './define-prompt.js';
import type { ResourceContentsInput, ResourceReturn } from './define-resource.js';
import { ToolOutputError } from './errors.js';
import type { CompletionReturn } from './read-context.js';
import { describeZodIssues } from './zod-issues.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

/** One contents object with the resource's URI and MIME type filled in, bytes as base64. */
function contents(item: ResourceContentsInput, uri: string, mimeType: string | undefined): Record<string, unknown> {
  const { uri: own, mimeType: ownType, ...rest } = item;
  const type = ownType ?? mimeType;
  const base = { uri: own ?? uri, ...(type !== undefined && { mimeType: type }) };
  if ('blob' in rest && rest.blob instanceof Uint8Array) {
    return { ...base, ...rest, blob: Buffer.from(rest.blob).toString('base64') };
  }
  return { ...base, ...rest };
}

/**
 * Maps what a resource read returned to `ReadResourceResult`: text → one text part (`text/plain` unless the
 * resource names its type), bytes → one base64 blob part, contents objects as given with `uri` and
 * `mimeType` defaulted. Throws ToolOutputError when the value is not resource contents.
 */
export function readResourceResult(
  uri: string,
  mimeType: string | undefined,
  value: ResourceReturn,
): ReadResourceResult {
  let items: readonly ResourceContentsInput[];
  if (typeof value === 'string') items = [{ text: value, mimeType: mimeType ?? 'text/plain' }];
  else if (value instanceof Uint8Array) items = [{ blob: value, mimeType: mimeType ?? 'application/octet-stream' }];
  else if (Array.isArray(value)) items = value as readonly ResourceContentsInput[];
  else if ('contents' in value && Array.isArray(value.contents)) items = value.contents;
  else items = [value as ResourceContentsInput];
  const result = ReadResourceResultSchema.safeParse({
    contents: items.map((item) => (isRecord(item) ? contents(item, uri, mimeType) : item)),
  });
  if (!result.success) {
    throw new ToolOutputError(`The resource read returned invalid contents: ${describeZodIssues(result.error)}`);
  }
  return result.data;
}

/** Maps what a prompt's `get` returned to `GetPromptResult`: text becomes one user message. */
export function promptResult(value: PromptReturn): GetPromptResult {
  const shaped =
    typeof value === 'string'
      ? { messages: [{ role: 'user', content: { type: 'text', text: value } }] }
      : Array.isArray(value)
        ? { messages: value }
        : value;
  const result = GetPromptResultSchema.safeParse(shaped);
  if (!result.success) {
    throw new ToolOutputError(`The prompt returned an invalid result: ${describeZodIssues(result.error)}`);
  }
  return result.data;
}

/**
 * Maps what a completer returned to `CompleteResult`: at most 100 values, best first; when it offered more,
 * `total` and `hasMore` say so.
 */
export function completionResult(value: CompletionReturn): CompleteResult {
  const offered = Array.isArray(value)
    ? { values: value as readonly string[] }
    : (value as Exclude<CompletionReturn, readonly string[]>);
  if (!Array.isArray(offered.values) || offered.values.some((item) => typeof item !== 'string')) {
    throw new ToolOutputError('The completer must return an array of strings, or { values: string[] }');
  }
  const values = offered.values.slice(0, MAX_COMPLETION_VALUES);
  const more = offered.values.length > values.length;
  const total = offered.total ?? (more ? offered.values.length : undefined);
  const hasMore = offered.hasMore ?? (more ? true : undefined);
  return {
    completion: {
      values,
      ...(total !== undefined && { total }),
      ...(hasMore !== undefined && { hasMore }),
    },
  };
}
