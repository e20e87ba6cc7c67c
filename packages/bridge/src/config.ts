import { TaskgateError } from '@taskgate/core';
import { ToolJsonSchemaSchema } from '@taskgate/protocol';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { AmqpSchema, amqpProblems } from './amqp/amqp-config.js';
import { CelerySchema, celeryProblems } from './celery/celery-config.js';
import { resolveServers, ServerSchema } from './upstream/server-config.js';

/** MCP tool names: 1–128 characters of A-Z a-z 0-9 _ - . */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** BullMQ queue names may not contain ':' (its key separator). */
const QUEUE_NAME = /^[^:\s]{1,200}$/;

/** An AMQP 0-9-1 broker (RabbitMQ): its url starts with amqp:// or amqps://. */
const AMQP_URL = /^amqps?:\/\//;

const ConnectionSchema = z.strictObject({
  url: z.string().regex(/^(rediss?|amqps?):\/\//, 'must start with redis://, rediss://, amqp:// or amqps://'),
  /** AMQP only: the durable queue the bridge's replicas share for the replies of `amqp:` tools. */
  replyQueue: z.string().trim().min(1).max(255, 'must be at most 255 characters').optional(),
});

const JsonSchemaObject = z.custom<Record<string, unknown>>(
  (value) => ToolJsonSchemaSchema.safeParse(value).success,
  'must be a JSON Schema object with type: "object"',
);

/** The job data: the tool arguments as they are, or a mapping whose "$.path" strings pick from them. */
const DataSchema = z.union([z.literal('arguments'), z.record(z.string(), z.unknown())]);

/** What every bridged tool declares, whatever runs it. */
const ToolFields = {
  name: z.string().regex(TOOL_NAME, 'must be 1-128 characters of A-Z a-z 0-9 _ - .'),
  title: z.string().min(1).optional(),
  description: z.string().trim().min(1, 'must be a non-empty string'),
  taskSupport: z.enum(['required', 'optional']).default('required'),
  inputSchema: JsonSchemaObject,
  outputSchema: JsonSchemaObject.optional(),
  result: z.enum(['auto', 'text', 'json']).default('auto'),
  /** Tasks of this tool one bridge process follows at once. */
  concurrency: z.number().int().min(1).default(64),
  /** Shards of the tool's taskgate queue (default: TASKGATE_QUEUE_SHARDS); see defineTool's queueShards. */
  queueShards: z.number().int().min(1).max(64).optional(),
  /** 2026-07-28, `optional` tools: wait this long for the result before answering with the task (ms). */
  inlineWaitMs: z.number().int().min(0).optional(),
  /** Principals (globs) who see and may call the tool; default everyone. */
  allow: z.array(z.string().min(1)).min(1, 'must list at least one principal (or leave allow out)').optional(),
};

/** A tool run by a job of an existing BullMQ queue. */
const QueueToolSchema = z.strictObject({
  ...ToolFields,
  queue: z.strictObject({
    name: z.string().regex(QUEUE_NAME, 'must be 1-200 characters without ":" or spaces'),
    prefix: z.string().min(1).default('bull'),
    connection: z.string().min(1),
  }),
  job: z.strictObject({
    name: z.string().min(1),
    options: z.record(z.string(), z.unknown()).default({}),
    data: DataSchema.default('arguments'),
  }),
});

/** A tool run by an existing Celery task. */
const CeleryToolSchema = z.strictObject({ ...ToolFields, celery: CelerySchema });

/** A tool run by a request/reply service behind an AMQP broker. */
const AmqpToolSchema = z.strictObject({ ...ToolFields, amqp: AmqpSchema });

/** A `tools:` entry: with `celery:` a Celery task, with `amqp:` a request/reply service, else a BullMQ queue. */
const ToolSchema = z.unknown().transform((value, ctx) => {
  const has = (key: string): boolean => typeof value === 'object' && value !== null && key in value;
  const schema = has('celery') ? CeleryToolSchema : has('amqp') ? AmqpToolSchema : QueueToolSchema;
  const parsed = (schema as typeof QueueToolSchema | typeof CeleryToolSchema | typeof AmqpToolSchema).safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  return z.NEVER;
});

const BridgeConfigSchema = z
  .strictObject({
    connections: z.record(z.string(), ConnectionSchema).default({}),
    tools: z.array(ToolSchema).default([]),
    /** Upstream MCP servers whose tools the bridge offers (see upstream/server-config.ts). */
    servers: z.array(ServerSchema).default([]),
  })
  .superRefine((config, context) => {
    if (config.tools.length === 0 && config.servers.length === 0) {
      context.addIssue({ code: 'custom', path: [], message: 'must list at least one entry in tools or servers' });
    }
  });

export type BridgeConfig = z.output<typeof BridgeConfigSchema>;
/** A tool bridged to an existing BullMQ queue. */
export type BridgedToolConfig = z.output<typeof QueueToolSchema>;
/** A tool bridged to an existing Celery task. */
export type CeleryToolConfig = z.output<typeof CeleryToolSchema>;
/** A tool bridged to a request/reply service behind an AMQP broker. */
export type AmqpToolConfig = z.output<typeof AmqpToolSchema>;
/** Any `tools:` entry. */
export type AnyBridgedToolConfig = BridgeConfig['tools'][number];

/** A configured connection. */
export type ConnectionConfig = BridgeConfig['connections'][string];

/** Is this connection an AMQP 0-9-1 broker (RabbitMQ), else a Redis server? */
export function isAmqpConnection(connection: ConnectionConfig): boolean {
  return AMQP_URL.test(connection.url);
}

/** The durable reply queue of an AMQP connection, shared by the bridge's replicas. */
export const DEFAULT_REPLY_QUEUE = 'taskgate.replies';

/** Is this tool bridged to a Celery task (else to a BullMQ queue)? */
export function isCeleryTool(tool: AnyBridgedToolConfig): tool is CeleryToolConfig {
  return 'celery' in tool;
}

/** Is this tool bridged to a request/reply service behind an AMQP broker? */
export function isAmqpTool(tool: AnyBridgedToolConfig): tool is AmqpToolConfig {
  return 'amqp' in tool;
}

/** Is this tool bridged to a job of an existing BullMQ queue? */
export function isQueueTool(tool: AnyBridgedToolConfig): tool is BridgedToolConfig {
  return 'queue' in tool;
}

/** Options the bridge sets itself: a job id given in the config would break the task ↔ job link. */
const RESERVED_OPTIONS = ['jobId', 'repeat', 'parent'] as const;

function pathOf(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path)
    text += typeof part === 'number' ? `[${part}]` : text === '' ? String(part) : `.${String(part)}`;
  return text === '' ? '(root)' : text;
}

/** Every problem of a bridge config, each naming its path. */
export class BridgeConfigError extends TaskgateError {
  constructor(readonly problems: readonly string[]) {
    super('INVALID_CONFIG', `Invalid bridge config:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

/**
 * Validates a parsed bridge config, `${NAME}` in the servers' env, headers and url read from `env`; throws
 * BridgeConfigError listing every problem with its path.
 */
export function parseBridgeConfig(input: unknown, env: NodeJS.ProcessEnv = process.env): BridgeConfig {
  const parsed = BridgeConfigSchema.safeParse(input);
  if (!parsed.success) {
    throw new BridgeConfigError(parsed.error.issues.map((issue) => `${pathOf(issue.path)}: ${issue.message}`));
  }
  const problems: string[] = [];
  const config = { ...parsed.data, servers: resolveServers(parsed.data.servers, env, problems) };
  for (const [name, connection] of Object.entries(config.connections)) {
    if (connection.replyQueue !== undefined && !isAmqpConnection(connection)) {
      problems.push(`connections.${name}.replyQueue: only an amqp:// or amqps:// connection has a reply queue`);
    }
  }
  const names = new Set<string>();
  config.tools.forEach((tool, index) => {
    if (names.has(tool.name)) problems.push(`tools[${index}].name: duplicate tool name "${tool.name}"`);
    names.add(tool.name);
    if (isCeleryTool(tool)) {
      problems.push(...celeryProblems(tool.celery, `tools[${index}].celery`, config.connections));
      return;
    }
    if (isAmqpTool(tool)) {
      problems.push(...amqpProblems(tool.amqp, `tools[${index}].amqp`, config.connections));
      return;
    }
    const connection = config.connections[tool.queue.connection];
    if (connection === undefined) {
      problems.push(`tools[${index}].queue.connection: unknown connection "${tool.queue.connection}"`);
    } else if (isAmqpConnection(connection)) {
      problems.push(
        `tools[${index}].queue.connection: "${tool.queue.connection}" is AMQP; a BullMQ queue lives in Redis`,
      );
    }
    for (const option of RESERVED_OPTIONS) {
      if (option in tool.job.options) {
        problems.push(`tools[${index}].job.options.${option}: set by the bridge (job id = task id), remove it`);
      }
    }
  });
  if (problems.length > 0) throw new BridgeConfigError(problems);
  return config;
}

/** Parses and validates a bridge config written in YAML (or JSON). */
export function loadBridgeConfig(text: string, env: NodeJS.ProcessEnv = process.env): BridgeConfig {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new BridgeConfigError([`(root): not valid YAML (${(error as Error).message})`]);
  }
  return parseBridgeConfig(document, env);
}
