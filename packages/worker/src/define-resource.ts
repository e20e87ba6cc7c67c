import {
  type ResourceEntry,
  type ResourceTemplateEntry,
  TaskgateError,
  UriTemplate,
  type UriVariables,
} from '@taskgate/core';
import {
  type Annotations,
  type Icon,
  type Resource,
  ResourceSchema,
  type ResourceTemplate,
  ResourceTemplateSchema,
} from '@taskgate/protocol';
import type { Completer, ResourceReadContext } from './read-context.js';

/** Contents of (a part of) a resource; `uri` and `mimeType` default to the resource's own. */
export type ResourceContentsInput =
  | {
      readonly uri?: string;
      readonly mimeType?: string;
      readonly text: string;
      readonly _meta?: Record<string, unknown>;
    }
  | {
      readonly uri?: string;
      readonly mimeType?: string;
      /** Base64 text, or the raw bytes. */
      readonly blob: string | Uint8Array;
      readonly _meta?: Record<string, unknown>;
    };

/** What a read returns: text, bytes, one contents object, several, or a whole `ReadResourceResult`. */
export type ResourceReturn =
  | string
  | Uint8Array
  | ResourceContentsInput
  | readonly ResourceContentsInput[]
  | { readonly contents: readonly ResourceContentsInput[] };

/** Fields that describe a resource or a template to clients. */
interface Described {
  /** Programmatic identifier (MCP `name`). */
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  readonly icons?: readonly Icon[];
  readonly annotations?: Annotations;
  /**
   * BullMQ queue its reads run on. Default: one queue shared by all resources, templates and prompts of the
   * worker (reads are short; one queue means one connection).
   */
  readonly queue?: string;
  /** Principals (globs, e.g. `team-a/*`) who may list and read it; default everyone. */
  readonly allow?: readonly string[];
}

/** What `defineResource` takes. */
export interface ResourceConfig extends Described {
  readonly uri: string;
  /** Raw size in bytes, when known. */
  readonly size?: number;
  read(ctx: ResourceReadContext): ResourceReturn | Promise<ResourceReturn>;
}

/** What `defineResourceTemplate` takes. */
export interface ResourceTemplateConfig extends Described {
  /** An RFC 6570 URI template, e.g. `file:///{path}` or `db://{table}/{id}`. */
  readonly uriTemplate: string;
  read(variables: UriVariables, ctx: ResourceReadContext): ResourceReturn | Promise<ResourceReturn>;
  /** Completions of the template's variables, by variable name (`completion/complete` with `ref/resource`). */
  readonly complete?: Readonly<Record<string, Completer>>;
}

/** A validated static resource, ready for `createWorker`. */
export interface ResourceDefinition {
  readonly kind: 'resource';
  readonly resource: Resource;
  readonly queue?: string;
  readonly allow?: readonly string[];
  read(ctx: ResourceReadContext): ResourceReturn | Promise<ResourceReturn>;
}

/** A validated resource template, ready for `createWorker`. */
export interface ResourceTemplateDefinition {
  readonly kind: 'resourceTemplate';
  readonly template: ResourceTemplate;
  readonly parsed: UriTemplate;
  readonly queue?: string;
  readonly allow?: readonly string[];
  readonly complete: Readonly<Record<string, Completer>>;
  read(variables: UriVariables, ctx: ResourceReadContext): ResourceReturn | Promise<ResourceReturn>;
}

/** Queue names BullMQ accepts (no ':'), as for tools. */
const QUEUE_NAME = /^[A-Za-z0-9_.-]{1,200}$/;
/** An absolute URI: a scheme, then anything. */
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:/;

function invalid(what: string, problem: string): TaskgateError {
  return new TaskgateError('INVALID_CONFIG', `Invalid ${what}: ${problem}`);
}

/** Checks the fields every offering shares; returns the wire description's common part. */
function described(what: string, config: Described): Omit<Resource, 'uri'> {
  if (typeof config.name !== 'string' || config.name.trim() === '')
    throw invalid(what, 'name must be a non-empty string');
  if (config.queue !== undefined && !QUEUE_NAME.test(config.queue)) {
    throw invalid(what, `queue '${config.queue}' must be 1-200 characters of A-Z a-z 0-9 _ - .`);
  }
  return {
    name: config.name,
    ...(config.title !== undefined && { title: config.title }),
    ...(config.description !== undefined && { description: config.description }),
    ...(config.mimeType !== undefined && { mimeType: config.mimeType }),
    ...(config.icons !== undefined && { icons: [...config.icons] }),
    ...(config.annotations !== undefined && { annotations: config.annotations }),
  };
}

/** A checked copy of an offering's `allow` (principal globs), or nothing when it has none. */
export function allowOf(what: string, allow: readonly string[] | undefined): { allow?: readonly string[] } {
  if (allow === undefined) return {};
  if (!Array.isArray(allow) || allow.length === 0 || allow.some((glob) => typeof glob !== 'string' || glob === '')) {
    throw invalid(what, 'allow must be a non-empty list of non-empty principal globs');
  }
  return { allow: Object.freeze([...allow]) };
}

/** Checks that every completer names one of `names`. */
export function checkCompleters(
  what: string,
  complete: Readonly<Record<string, Completer>> | undefined,
  names: readonly string[],
): Readonly<Record<string, Completer>> {
  for (const [name, completer] of Object.entries(complete ?? {})) {
    if (!names.includes(name)) throw invalid(what, `complete.${name} names no argument (known: ${names.join(', ')})`);
    if (typeof completer !== 'function') throw invalid(what, `complete.${name} must be a function`);
  }
  return Object.freeze({ ...complete });
}

/** A resource a worker serves at one fixed URI (`resources/list`, `resources/read`). */
export function defineResource(config: ResourceConfig): ResourceDefinition {
  const what = `resource '${String(config.uri)}'`;
  if (typeof config.uri !== 'string' || !ABSOLUTE_URI.test(config.uri)) {
    throw invalid(what, 'uri must be an absolute URI such as file:///notes.txt or test://static-text');
  }
  if (typeof config.read !== 'function') throw invalid(what, 'read must be a function');
  if (config.size !== undefined && (!Number.isSafeInteger(config.size) || config.size < 0)) {
    throw invalid(what, 'size must be a non-negative integer (bytes)');
  }
  const resource = {
    uri: config.uri,
    ...described(what, config),
    ...(config.size !== undefined && { size: config.size }),
  };
  const wire = ResourceSchema.safeParse(resource);
  if (!wire.success) throw invalid(what, `it does not form a valid MCP Resource (${wire.error.message})`);
  return Object.freeze({
    kind: 'resource' as const,
    resource: wire.data,
    ...(config.queue !== undefined && { queue: config.queue }),
    ...allowOf(what, config.allow),
    read: config.read,
  });
}

/** A family of resources a worker serves by URI template (`resources/templates/list`, `resources/read`). */
export function defineResourceTemplate(config: ResourceTemplateConfig): ResourceTemplateDefinition {
  const what = `resource template '${String(config.uriTemplate)}'`;
  let parsed: UriTemplate;
  try {
    parsed = new UriTemplate(String(config.uriTemplate));
  } catch (error) {
    throw invalid(what, (error as Error).message);
  }
  if (!parsed.isTemplate) throw invalid(what, 'it has no {variables}; use defineResource for a single URI');
  if (!ABSOLUTE_URI.test(config.uriTemplate)) throw invalid(what, 'it must start with a URI scheme');
  if (typeof config.read !== 'function') throw invalid(what, 'read must be a function');
  const template = { uriTemplate: config.uriTemplate, ...described(what, config) };
  const wire = ResourceTemplateSchema.safeParse(template);
  if (!wire.success) throw invalid(what, `it does not form a valid MCP ResourceTemplate (${wire.error.message})`);
  return Object.freeze({
    kind: 'resourceTemplate' as const,
    template: wire.data,
    parsed,
    ...(config.queue !== undefined && { queue: config.queue }),
    ...allowOf(what, config.allow),
    complete: checkCompleters(what, config.complete, parsed.variables),
    read: config.read,
  });
}

/** The catalog entry of a resource, its reads going to `queue` unless it names its own. */
export function toResourceEntry(def: ResourceDefinition, queue: string): ResourceEntry {
  return { resource: def.resource, queue: def.queue ?? queue, ...(def.allow !== undefined && { allow: def.allow }) };
}

/** The catalog entry of a resource template. */
export function toTemplateEntry(def: ResourceTemplateDefinition, queue: string): ResourceTemplateEntry {
  return {
    template: def.template,
    queue: def.queue ?? queue,
    completable: Object.keys(def.complete),
    ...(def.allow !== undefined && { allow: def.allow }),
  };
}
