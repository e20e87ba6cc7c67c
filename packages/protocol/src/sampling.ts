import { z } from 'zod';
import { AnyObjectSchema } from './any-object.js';
import {
  AudioContentSchema,
  ContentBlockSchema,
  ImageContentSchema,
  RoleSchema,
  TextContentSchema,
} from './content.js';
import { ResultSchema, TaskAugmentedRequestParamsSchema } from './message-base.js';
import { ToolSchema } from './tools.js';

// A tool-call task that needs an LLM completion from the client sends these with the related-task `_meta`
// (INP-2); the client may run them as tasks itself when it declares `tasks.requests.sampling` (CLT-1).

const ContentMetaSchema = z.record(z.string(), z.unknown());

/** A model the server would like, by (partial) name. */
export const ModelHintSchema = z.object({
  name: z.string().optional(),
});
/** A model name hint. */
export type ModelHint = z.infer<typeof ModelHintSchema>;

/** How the client should trade cost, speed and intelligence when it picks a model; each 0 to 1. */
export const ModelPreferencesSchema = z.object({
  hints: z.array(ModelHintSchema).optional(),
  costPriority: z.number().min(0).max(1).optional(),
  speedPriority: z.number().min(0).max(1).optional(),
  intelligencePriority: z.number().min(0).max(1).optional(),
});
/** Model selection preferences. */
export type ModelPreferences = z.infer<typeof ModelPreferencesSchema>;

/** Whether the model may, must or must not use the offered tools. */
export const ToolChoiceSchema = z.object({
  mode: z.enum(['auto', 'required', 'none']).optional(),
});
/** Tool usage mode for sampling. */
export type ToolChoice = z.infer<typeof ToolChoiceSchema>;

/** The model asks to call a tool. */
export const ToolUseContentSchema = z.object({
  type: z.literal('tool_use'),
  /** Correlates the matching `tool_result`. */
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  _meta: ContentMetaSchema.optional(),
});
/** A tool use request from the model. */
export type ToolUseContent = z.infer<typeof ToolUseContentSchema>;

/** The outcome of a tool the model asked for, fed back to it. */
export const ToolResultContentSchema = z.object({
  type: z.literal('tool_result'),
  toolUseId: z.string(),
  content: z.array(ContentBlockSchema).default([]),
  structuredContent: z.looseObject({}).optional(),
  isError: z.boolean().optional(),
  _meta: ContentMetaSchema.optional(),
});
/** A tool result given to the model. */
export type ToolResultContent = z.infer<typeof ToolResultContentSchema>;

/** Content of a sampling result when no tools were offered: text, image or audio. */
export const SamplingContentSchema = z.discriminatedUnion('type', [
  TextContentSchema,
  ImageContentSchema,
  AudioContentSchema,
]);
/** Single-block sampling content. */
export type SamplingContent = z.infer<typeof SamplingContentSchema>;

/** Any block a sampling message may hold, tool use and tool results included. */
export const SamplingMessageContentBlockSchema = z.discriminatedUnion('type', [
  TextContentSchema,
  ImageContentSchema,
  AudioContentSchema,
  ToolUseContentSchema,
  ToolResultContentSchema,
]);
/** A sampling message content block. */
export type SamplingMessageContentBlock = z.infer<typeof SamplingMessageContentBlockSchema>;

const SamplingMessageContentSchema = z.union([
  SamplingMessageContentBlockSchema,
  z.array(SamplingMessageContentBlockSchema),
]);

/** One turn of the conversation to sample from. */
export const SamplingMessageSchema = z.object({
  role: RoleSchema,
  content: SamplingMessageContentSchema,
  _meta: ContentMetaSchema.optional(),
});
/** A sampling message. */
export type SamplingMessage = z.infer<typeof SamplingMessageSchema>;

/** Params of `sampling/createMessage`. */
export const CreateMessageRequestParamsSchema = TaskAugmentedRequestParamsSchema.extend({
  messages: z.array(SamplingMessageSchema),
  modelPreferences: ModelPreferencesSchema.optional(),
  systemPrompt: z.string().optional(),
  /** `thisServer` and `allServers` are soft-deprecated. */
  includeContext: z.enum(['none', 'thisServer', 'allServers']).optional(),
  temperature: z.number().optional(),
  maxTokens: z.number().int(),
  stopSequences: z.array(z.string()).optional(),
  /** Provider-specific; passed through untouched. */
  metadata: AnyObjectSchema.optional(),
  /** Only when the client declared `capabilities.sampling.tools`. */
  tools: z.array(ToolSchema).optional(),
  toolChoice: ToolChoiceSchema.optional(),
});
/** Params of `sampling/createMessage`. */
export type CreateMessageRequestParams = z.infer<typeof CreateMessageRequestParamsSchema>;

/** Server to client: ask the client's LLM for a completion. */
export const CreateMessageRequestSchema = z.object({
  method: z.literal('sampling/createMessage'),
  params: CreateMessageRequestParamsSchema,
});
/** A `sampling/createMessage` request. */
export type CreateMessageRequest = z.infer<typeof CreateMessageRequestSchema>;

const CreateMessageResultBaseSchema = ResultSchema.extend({
  model: z.string(),
  /** `endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or a provider-specific reason. */
  stopReason: z.string().optional(),
  role: RoleSchema,
});

/** The client's completion when no tools were offered: exactly one text, image or audio block. */
export const CreateMessageResultSchema = CreateMessageResultBaseSchema.extend({
  content: SamplingContentSchema,
});
/** The result of `sampling/createMessage` without tools. */
export type CreateMessageResult = z.infer<typeof CreateMessageResultSchema>;

/** The client's completion when tools were offered: one block or several, tool use included. */
export const CreateMessageResultWithToolsSchema = CreateMessageResultBaseSchema.extend({
  content: SamplingMessageContentSchema,
});
/** The result of `sampling/createMessage` with tools. */
export type CreateMessageResultWithTools = z.infer<typeof CreateMessageResultWithToolsSchema>;
