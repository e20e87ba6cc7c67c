import { z } from 'zod';
import { AnyObjectSchema } from './any-object.js';
import { ContentBlockSchema } from './content.js';
import { IconSchema } from './implementation.js';
import { ResultSchema, TaskAugmentedRequestParamsSchema } from './message-base.js';
import { PaginatedRequestParamsSchema, PaginatedResultSchema } from './pagination.js';

/** Behaviour hints about a tool. Hints only: never trust them from an untrusted server. */
export const ToolAnnotationsSchema = z.object({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});
/** Behaviour hints about a tool. */
export type ToolAnnotations = z.infer<typeof ToolAnnotationsSchema>;

/** Whether a tool may, must or must not be called as a task (TOOL-1); absent means `forbidden`. */
export const ToolTaskSupportSchema = z.enum(['required', 'optional', 'forbidden']);
/** A tool's task support. */
export type ToolTaskSupport = z.infer<typeof ToolTaskSupportSchema>;

/** How a tool is executed. */
export const ToolExecutionSchema = z.object({
  taskSupport: ToolTaskSupportSchema.optional(),
});
/** How a tool is executed. */
export type ToolExecution = z.infer<typeof ToolExecutionSchema>;

/** A JSON Schema (2020-12) describing an object: the root of a tool's input or output schema. */
export const ToolJsonSchemaSchema = z.looseObject({
  type: z.literal('object'),
  properties: z.record(z.string(), AnyObjectSchema).optional(),
  required: z.array(z.string()).optional(),
});
/** The JSON Schema of a tool's input or output. */
export type ToolJsonSchema = z.infer<typeof ToolJsonSchemaSchema>;

/** A tool as `tools/list` describes it. */
export const ToolSchema = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: ToolJsonSchemaSchema,
  outputSchema: ToolJsonSchemaSchema.optional(),
  annotations: ToolAnnotationsSchema.optional(),
  execution: ToolExecutionSchema.optional(),
  icons: z.array(IconSchema).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
/** A tool definition. */
export type Tool = z.infer<typeof ToolSchema>;

/** Client to server: list the tools, a page at a time. */
export const ListToolsRequestSchema = z.object({
  method: z.literal('tools/list'),
  params: PaginatedRequestParamsSchema.optional(),
});
/** A `tools/list` request. */
export type ListToolsRequest = z.infer<typeof ListToolsRequestSchema>;

/** One page of tools. */
export const ListToolsResultSchema = PaginatedResultSchema.extend({
  tools: z.array(ToolSchema),
});
/** The result of `tools/list`. */
export type ListToolsResult = z.infer<typeof ListToolsResultSchema>;

/** Params of `tools/call`: which tool, its arguments, and optionally `task` to run it as a task (CRT-1). */
export const CallToolRequestParamsSchema = TaskAugmentedRequestParamsSchema.extend({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
});
/** Params of `tools/call`. */
export type CallToolRequestParams = z.infer<typeof CallToolRequestParamsSchema>;

/** Client to server: invoke a tool. */
export const CallToolRequestSchema = z.object({
  method: z.literal('tools/call'),
  params: CallToolRequestParamsSchema,
});
/** A `tools/call` request. */
export type CallToolRequest = z.infer<typeof CallToolRequestSchema>;

/**
 * What a tool returned. Tool failures are results with `isError: true`, not JSON-RPC errors. `content`
 * defaults to `[]` because servers that return only `structuredContent` sometimes omit it.
 */
export const CallToolResultSchema = ResultSchema.extend({
  content: z.array(ContentBlockSchema).default([]),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});
/** The result of `tools/call`. */
export type CallToolResult = z.infer<typeof CallToolResultSchema>;
