import { type CatalogEntry, Keys, MAX_QUEUE_SHARDS, TaskgateError } from '@taskgate/core';
import {
  type CallToolResult,
  type Tool,
  type ToolAnnotations,
  ToolAnnotationsSchema,
  type ToolJsonSchema,
  ToolJsonSchemaSchema,
  ToolSchema,
  type ToolTaskSupport,
  ToolTaskSupportSchema,
} from '@taskgate/protocol';
import { z } from 'zod';
import type { ToolContext } from './tool-context.js';

/** What `retryOnCrash: true` allows: re-runs after crashes per task, beyond `attempts`. */
export const DEFAULT_CRASH_RERUNS = 3;
/** The largest `retryOnCrash` number: a tool that crashes its worker this often is broken, not unlucky. */
const MAX_CRASH_RERUNS = 100;

/** MCP tool names: 1–128 characters of A-Z a-z 0-9 _ - . (case-sensitive). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** BullMQ queue names: no ':' (BullMQ uses it as its key separator); we keep to the tool-name alphabet. */
const QUEUE_NAME = /^[A-Za-z0-9_.-]{1,200}$/;

/** A tool's arguments given as JSON Schema (2020-12) instead of zod, for what zod cannot express. */
export type JsonSchemaInput = ToolJsonSchema;

/** What a handler may return: text, a whole CallToolResult, or (with an outputSchema) the structured output. */
export type ToolReturn<O extends z.ZodObject | undefined> =
  | string
  | CallToolResult
  | (O extends z.ZodObject ? z.input<O> : Record<string, unknown>)
  | undefined
  // biome-ignore lint/suspicious/noConfusingVoidType: lets `async () => {}` handlers type-check (they return nothing).
  | void;

/** Jobs BullMQ starts per time window, across all workers of the tool's queue. */
export interface RateLimit {
  readonly max: number;
  readonly durationMs: number;
}

/** What `defineTool` takes. */
/** Jobs of a tool's queue one worker process runs at once when the tool does not say (`concurrency`). */
export const DEFAULT_TOOL_CONCURRENCY = 10;

export interface ToolConfig<I extends z.ZodObject, O extends z.ZodObject | undefined = undefined> {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  /** Arguments; parsed (defaults applied) before the handler runs. Published as JSON Schema. */
  readonly inputSchema: I;
  /** Structured output; a plain object returned by the handler is validated against it. */
  readonly outputSchema?: O;
  readonly taskSupport: ToolTaskSupport;
  readonly annotations?: ToolAnnotations;
  /** BullMQ queue; defaults to the tool's own queue. Tools sharing a queue share its concurrency and rate limit. */
  readonly queue?: string;
  /**
   * BullMQ queues the tool's jobs spread over, each in a slot of its own (default: the worker's `queueShards`,
   * TASKGATE_QUEUE_SHARDS, 1). More than 1 lets one hot tool use several Redis Cluster masters. Tools sharing a
   * queue must agree.
   */
  readonly queueShards?: number;
  /** Executions per task, crashes included (default 1). */
  readonly attempts?: number;
  /**
   * Runs the task again on another worker when the worker running it crashes, without spending `attempts`:
   * `true` allows up to 3 such re-runs per task, a number that many (0 = none, the default). Crashes past
   * this spend `attempts`. The tool must be safe to run twice (at-least-once: key side effects by `ctx.taskId`).
   */
  readonly retryOnCrash?: boolean | number;
  /** Delay before a retry (ms), doubled per attempt. */
  readonly backoffMs?: number;
  /**
   * Jobs of this tool's queue one worker process runs at once (default `DEFAULT_TOOL_CONCURRENCY`, 10). Tasks
   * mostly wait (on an API, a model, a user), so one slow task must not hold a whole worker; set 1 for a tool
   * whose executions must not overlap within a process, more for tools that only wait.
   */
  readonly concurrency?: number;
  readonly rateLimit?: RateLimit;
  /** Aborts `ctx.signal` after this long (ms); the attempt then fails like a thrown error. */
  readonly timeoutMs?: number;
  /**
   * When the tool runs as a task: text the host may hand the model at once, before the result exists
   * (`_meta["io.modelcontextprotocol/model-immediate-response"]` of the CreateTaskResult, CRT-5).
   */
  readonly immediateResponse?: string;
  /**
   * Revision 2026-07-28, a client of the tasks extension: the call first gathers the input the tool asks for in
   * multi-round-trip rounds (`input_required`, no task id yet) and becomes a task (CreateTaskResult) on the
   * round that brings the answers. Without it the task is created at once and asks through `tasks/get`.
   * Sessions of 2025-11-25 are not affected.
   */
  readonly inputBeforeTask?: boolean;
  /**
   * Revision 2026-07-28, a client of the tasks extension calling an `optional` tool: how long the gateway waits
   * for the task before it answers with the CreateTaskResult (ms); a task finished by then answers inline.
   */
  readonly inlineWaitMs?: number;
  /** Principals (globs, e.g. `team-a/*`) who may list and call the tool; default everyone. */
  readonly allow?: readonly string[];
  handler(args: z.output<I>, ctx: ToolContext): ToolReturn<O> | Promise<ToolReturn<O>>;
}

/** A validated tool, ready for `createWorker` and `toCatalogEntry`. */
export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject | undefined = undefined> {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: I;
  readonly outputSchema?: O;
  readonly taskSupport: ToolTaskSupport;
  readonly annotations?: ToolAnnotations;
  readonly queue: string;
  /** Shards of the queue when the tool says (else the worker's default). */
  readonly queueShards?: number;
  readonly attempts: number;
  /** Re-runs after crashes that do not spend `attempts` (0 = none). */
  readonly crashReruns: number;
  readonly backoffMs?: number;
  readonly concurrency: number;
  readonly rateLimit?: RateLimit;
  readonly timeoutMs?: number;
  readonly immediateResponse?: string;
  readonly inputBeforeTask?: boolean;
  readonly inlineWaitMs?: number;
  readonly allow?: readonly string[];
  /** JSON Schema (2020-12) of the arguments as a client sends them: zod's without `$schema`, or the one given. */
  readonly inputJsonSchema: ToolJsonSchema;
  readonly outputJsonSchema?: ToolJsonSchema;
  /**
   * Told when a job of this tool is skipped because its task is not live any more (cancelled, finished or
   * expired before this execution could start), e.g. to withdraw work handed elsewhere. Errors are logged.
   */
  readonly onSkipped?: (taskId: string) => Promise<void>;
  // A method (not a property) on purpose: definitions with different argument types then fit AnyToolDefinition.
  handler(args: z.output<I>, ctx: ToolContext): ToolReturn<O> | Promise<ToolReturn<O>>;
}

/** Any tool definition, whatever its schemas: what collections of tools hold. */
export type AnyToolDefinition = ToolDefinition<z.ZodObject, z.ZodObject | undefined>;

function invalid(name: string, problem: string): TaskgateError {
  return new TaskgateError('INVALID_CONFIG', `Invalid tool '${name}': ${problem}`);
}

function positiveInt(name: string, field: string, value: number | undefined, min: number): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < min)) {
    throw invalid(name, `${field} must be an integer of at least ${min}, got ${value}`);
  }
}

/** The crash re-runs a `retryOnCrash` value allows. */
function crashRerunsOf(name: string, value: unknown): number {
  if (value === undefined || value === false) return 0;
  if (value === true) return DEFAULT_CRASH_RERUNS;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_CRASH_RERUNS) {
    throw invalid(name, `retryOnCrash must be true, false or an integer from 0 to ${MAX_CRASH_RERUNS}, got ${value}`);
  }
  return value;
}

/** The JSON Schema of an object schema, or a clear error when zod cannot express it or it is not an object. */
function objectJsonSchema(name: string, field: string, schema: unknown, io: 'input' | 'output'): ToolJsonSchema {
  if (!(schema instanceof z.ZodType)) throw invalid(name, `${field} must be a zod object schema`);
  let json: Record<string, unknown>;
  try {
    json = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  } catch (error) {
    throw invalid(name, `${field} cannot be expressed as JSON Schema (${(error as Error).message})`);
  }
  if (json.type !== 'object') throw invalid(name, `${field} must describe an object (type: "object")`);
  // MCP reads schemas without `$schema` as 2020-12, which is what zod emits; leaving it out spares
  // validators that do not know the 2020-12 meta-schema URI.
  const { $schema: _dialect, ...rest } = json;
  return rest as ToolJsonSchema;
}

/** What `defineTool` takes when the arguments are described by a JSON Schema instead of zod. */
export type JsonSchemaToolConfig<O extends z.ZodObject | undefined = undefined> = Omit<
  ToolConfig<z.ZodObject, O>,
  'inputSchema' | 'handler'
> & {
  /**
   * Published as written (`$schema`, `$defs`, `$ref`, `additionalProperties`, ... preserved) and enforced by
   * the gateway (ajv, JSON Schema 2020-12) before a call is accepted; the handler gets the arguments as sent.
   */
  readonly inputSchema: JsonSchemaInput;
  handler(args: Record<string, unknown>, ctx: ToolContext): ToolReturn<O> | Promise<ToolReturn<O>>;
};

/** Stands in for a JSON Schema input in the worker: arguments pass through as the gateway accepted them. */
const PASS_THROUGH = z.looseObject({});

/** The JSON Schema given as a tool's input, checked for the shape MCP requires (an object schema). */
function rawJsonSchema(name: string, schema: object): ToolJsonSchema {
  const parsed = ToolJsonSchemaSchema.safeParse(schema);
  if (!parsed.success) throw invalid(name, 'inputSchema must be a zod object or a JSON Schema with type "object"');
  // A JSON round trip: what is published is exactly what the gateway's validator compiles.
  return JSON.parse(JSON.stringify(parsed.data)) as ToolJsonSchema;
}

/** Validates a tool and computes its JSON Schemas once; throws TaskgateError('INVALID_CONFIG') on any problem. */
export function defineTool<O extends z.ZodObject | undefined = undefined>(
  config: JsonSchemaToolConfig<O>,
): ToolDefinition<typeof PASS_THROUGH, O>;
export function defineTool<I extends z.ZodObject, O extends z.ZodObject | undefined = undefined>(
  config: ToolConfig<I, O>,
): ToolDefinition<I, O>;
export function defineTool<I extends z.ZodObject, O extends z.ZodObject | undefined = undefined>(
  input: ToolConfig<I, O> | JsonSchemaToolConfig<O>,
): ToolDefinition<I, O> {
  const raw = !(input.inputSchema instanceof z.ZodType) && typeof input.inputSchema === 'object';
  // JSON-Schema tools are ToolConfigs whose zod input passes anything through.
  const config = (raw ? { ...input, inputSchema: PASS_THROUGH } : input) as ToolConfig<I, O>;
  const name = String(config.name);
  if (!TOOL_NAME.test(name)) {
    throw invalid(name, 'names are 1-128 characters of A-Z a-z 0-9 _ - . (MCP tool name rules)');
  }
  if (typeof config.description !== 'string' || config.description.trim() === '') {
    throw invalid(name, 'description must be a non-empty string (models choose tools by it)');
  }
  if (!ToolTaskSupportSchema.safeParse(config.taskSupport).success) {
    throw invalid(name, `taskSupport must be 'required', 'optional' or 'forbidden'`);
  }
  if (config.annotations !== undefined && !ToolAnnotationsSchema.safeParse(config.annotations).success) {
    throw invalid(name, 'annotations do not match the MCP ToolAnnotations shape');
  }
  if (typeof config.handler !== 'function') throw invalid(name, 'handler must be a function');
  const queue = config.queue ?? Keys.toolQueueName(name);
  if (!QUEUE_NAME.test(queue)) throw invalid(name, `queue '${queue}' must be 1-200 characters of A-Z a-z 0-9 _ - .`);
  if (config.queueShards !== undefined && !validShards(config.queueShards)) {
    throw invalid(name, `queueShards must be a whole number from 1 to ${MAX_QUEUE_SHARDS}`);
  }
  positiveInt(name, 'attempts', config.attempts, 1);
  positiveInt(name, 'backoffMs', config.backoffMs, 0);
  positiveInt(name, 'concurrency', config.concurrency, 1);
  positiveInt(name, 'timeoutMs', config.timeoutMs, 1);
  positiveInt(name, 'rateLimit.max', config.rateLimit?.max, 1);
  positiveInt(name, 'rateLimit.durationMs', config.rateLimit?.durationMs, 1);
  const crashReruns = crashRerunsOf(name, config.retryOnCrash);
  positiveInt(name, 'inlineWaitMs', config.inlineWaitMs, 0);
  if (
    config.allow !== undefined &&
    (!Array.isArray(config.allow) || config.allow.some((p) => typeof p !== 'string' || p === ''))
  ) {
    throw invalid(name, 'allow must be a list of non-empty principal globs');
  }

  const inputJsonSchema = raw
    ? rawJsonSchema(name, input.inputSchema)
    : objectJsonSchema(name, 'inputSchema', config.inputSchema, 'input');
  const outputJsonSchema =
    config.outputSchema === undefined
      ? undefined
      : objectJsonSchema(name, 'outputSchema', config.outputSchema, 'output');
  const definition: ToolDefinition<I, O> = {
    name,
    ...(config.title !== undefined && { title: config.title }),
    description: config.description,
    inputSchema: config.inputSchema,
    ...(config.outputSchema !== undefined && { outputSchema: config.outputSchema }),
    taskSupport: config.taskSupport,
    ...(config.annotations !== undefined && { annotations: config.annotations }),
    queue,
    ...(config.queueShards !== undefined && { queueShards: config.queueShards }),
    attempts: config.attempts ?? 1,
    crashReruns,
    ...(config.backoffMs !== undefined && { backoffMs: config.backoffMs }),
    concurrency: config.concurrency ?? DEFAULT_TOOL_CONCURRENCY,
    ...(config.rateLimit !== undefined && { rateLimit: { ...config.rateLimit } }),
    ...(config.timeoutMs !== undefined && { timeoutMs: config.timeoutMs }),
    ...(config.immediateResponse !== undefined && { immediateResponse: String(config.immediateResponse) }),
    ...(config.inputBeforeTask === true && { inputBeforeTask: true }),
    ...(config.inlineWaitMs !== undefined && { inlineWaitMs: config.inlineWaitMs }),
    ...(config.allow !== undefined && { allow: [...config.allow] }),
    inputJsonSchema,
    ...(outputJsonSchema !== undefined && { outputJsonSchema }),
    handler: config.handler,
  };
  const wire = ToolSchema.safeParse(toolDescription(definition));
  if (!wire.success) throw invalid(name, `it does not form a valid MCP Tool (${wire.error.message})`);
  return Object.freeze(definition);
}

type ToolDescriptionFields = Pick<
  AnyToolDefinition,
  'name' | 'title' | 'description' | 'inputJsonSchema' | 'outputJsonSchema' | 'annotations' | 'taskSupport'
>;

/** The tool as `tools/list` shows it (TOOL-1: `execution.taskSupport` always present). */
function toolDescription(def: ToolDescriptionFields): Tool {
  return {
    name: def.name,
    ...(def.title !== undefined && { title: def.title }),
    description: def.description,
    inputSchema: def.inputJsonSchema,
    ...(def.outputJsonSchema !== undefined && { outputSchema: def.outputJsonSchema }),
    ...(def.annotations !== undefined && { annotations: def.annotations }),
    execution: { taskSupport: def.taskSupport },
  };
}

/** True for a shard count a queue may have. */
function validShards(shards: unknown): boolean {
  return typeof shards === 'number' && Number.isInteger(shards) && shards >= 1 && shards <= MAX_QUEUE_SHARDS;
}

/**
 * The catalog entry workers publish for a tool: its wire description, queue (with its shard count when more
 * than one: an entry of one shard is the same as before shards existed) and retry policy.
 */
export function toCatalogEntry(def: AnyToolDefinition, defaultShards = 1): CatalogEntry {
  const shards = def.queueShards ?? defaultShards;
  return {
    tool: toolDescription(def),
    queue: def.queue,
    ...(shards > 1 && { queueShards: shards }),
    attempts: def.attempts,
    ...(def.backoffMs !== undefined && { backoffMs: def.backoffMs }),
    ...(def.immediateResponse !== undefined && { immediateResponse: def.immediateResponse }),
    ...(def.inputBeforeTask === true && { inputBeforeTask: true }),
    ...(def.inlineWaitMs !== undefined && { inlineWaitMs: def.inlineWaitMs }),
    ...(def.allow !== undefined && { allow: def.allow }),
  };
}
