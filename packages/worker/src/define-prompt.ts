import { type PromptEntry, TaskgateError } from '@taskgate/core';
import {
  type GetPromptResult,
  type Icon,
  type Prompt,
  type PromptArgument,
  type PromptMessage,
  PromptSchema,
} from '@taskgate/protocol';
import { z } from 'zod';
import { allowOf, checkCompleters } from './define-resource.js';
import type { Completer, ReadContext } from './read-context.js';

/** What a prompt's `get` returns: one user message's text, the messages, or a whole `GetPromptResult`. */
export type PromptReturn = string | readonly PromptMessage[] | GetPromptResult;

/** What `definePrompt` takes. */
export interface PromptConfig<A extends z.ZodObject> {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly icons?: readonly Icon[];
  /**
   * The prompt's arguments: a zod object of string schemas (`z.string()`, `z.enum([...])`, `.optional()`),
   * `.describe()` giving each its description. Parsed before `get` runs. Default: no arguments.
   */
  readonly arguments?: A;
  get(args: z.output<A>, ctx: ReadContext): PromptReturn | Promise<PromptReturn>;
  /** Completions of the arguments, by argument name (`completion/complete` with `ref/prompt`). */
  readonly complete?: Readonly<Record<string, Completer>>;
  /** BullMQ queue its gets run on; default: the worker's shared read queue. */
  readonly queue?: string;
  /** Principals (globs, e.g. `team-a/*`) who may list and get it; default everyone. */
  readonly allow?: readonly string[];
}

/** A validated prompt, ready for `createWorker`. */
export interface PromptDefinition<A extends z.ZodObject = z.ZodObject> {
  readonly kind: 'prompt';
  readonly prompt: Prompt;
  readonly arguments: A;
  readonly queue?: string;
  readonly allow?: readonly string[];
  readonly complete: Readonly<Record<string, Completer>>;
  // A method (not a property): definitions with different argument types then fit AnyPromptDefinition.
  get(args: z.output<A>, ctx: ReadContext): PromptReturn | Promise<PromptReturn>;
}

/** Any prompt definition, whatever its arguments. */
export type AnyPromptDefinition = PromptDefinition<z.ZodObject>;

const QUEUE_NAME = /^[A-Za-z0-9_.-]{1,200}$/;

function invalid(name: string, problem: string): TaskgateError {
  return new TaskgateError('INVALID_CONFIG', `Invalid prompt '${name}': ${problem}`);
}

/** The wire description of a zod object's properties as prompt arguments; all must be strings. */
function promptArguments(name: string, schema: z.ZodObject): PromptArgument[] {
  let json: { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  try {
    json = z.toJSONSchema(schema, { io: 'input' }) as typeof json;
  } catch (error) {
    throw invalid(name, `arguments cannot be expressed as JSON Schema (${(error as Error).message})`);
  }
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([argument, property]) => {
    if (property.type !== 'string') {
      throw invalid(name, `argument '${argument}' must be a string schema (prompt arguments are strings)`);
    }
    return {
      name: argument,
      ...(typeof property.title === 'string' && { title: property.title }),
      ...(typeof property.description === 'string' && { description: property.description }),
      required: required.has(argument),
    };
  });
}

/** A prompt a worker renders (`prompts/list`, `prompts/get`), optionally with argument completions. */
export function definePrompt<A extends z.ZodObject = z.ZodObject<Record<string, never>>>(
  config: PromptConfig<A>,
): PromptDefinition<A> {
  const name = String(config.name);
  if (name.trim() === '' || name.length > 128) throw invalid(name, 'name must be 1-128 characters');
  if (typeof config.get !== 'function') throw invalid(name, 'get must be a function');
  if (config.queue !== undefined && !QUEUE_NAME.test(config.queue)) {
    throw invalid(name, `queue '${config.queue}' must be 1-200 characters of A-Z a-z 0-9 _ - .`);
  }
  const schema = (config.arguments ?? z.object({})) as A;
  if (!(schema instanceof z.ZodObject)) throw invalid(name, 'arguments must be a zod object schema');
  const args = promptArguments(name, schema);
  const prompt = {
    name,
    ...(config.title !== undefined && { title: config.title }),
    ...(config.description !== undefined && { description: config.description }),
    ...(args.length > 0 && { arguments: args }),
    ...(config.icons !== undefined && { icons: [...config.icons] }),
  };
  const wire = PromptSchema.safeParse(prompt);
  if (!wire.success) throw invalid(name, `it does not form a valid MCP Prompt (${wire.error.message})`);
  return Object.freeze({
    kind: 'prompt' as const,
    prompt: wire.data,
    arguments: schema,
    ...(config.queue !== undefined && { queue: config.queue }),
    ...allowOf(`prompt '${name}'`, config.allow),
    complete: checkCompleters(
      `prompt '${name}'`,
      config.complete,
      args.map((arg) => arg.name),
    ),
    get: config.get,
  });
}

/** The catalog entry of a prompt, its gets going to `queue` unless it names its own. */
export function toPromptEntry(def: AnyPromptDefinition, queue: string): PromptEntry {
  return {
    prompt: def.prompt,
    queue: def.queue ?? queue,
    completable: Object.keys(def.complete),
    ...(def.allow !== undefined && { allow: def.allow }),
  };
}
