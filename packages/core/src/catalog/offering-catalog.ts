import type { Prompt, Resource, ResourceTemplate } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import type { Keys } from '../redis/keys.js';
import { type Allowed, visibleTo } from './allow-list.js';
import { Catalog } from './catalog.js';
import { UriTemplate, type UriVariables } from './uri-template.js';

/** A static resource as workers publish it: what `resources/list` shows and the queue that reads it. */
export interface ResourceEntry {
  readonly resource: Resource;
  readonly queue: string;
  /** Principals (globs) who may list and read it; absent: everyone. */
  readonly allow?: readonly string[];
}

/** A resource template as workers publish it; `completable` names the variables with completions. */
export interface ResourceTemplateEntry {
  readonly template: ResourceTemplate;
  readonly queue: string;
  readonly completable: readonly string[];
  /** Principals (globs) who may list it and read its URIs; absent: everyone. */
  readonly allow?: readonly string[];
}

/** A prompt as workers publish it; `completable` names the arguments with completions. */
export interface PromptEntry {
  readonly prompt: Prompt;
  readonly queue: string;
  readonly completable: readonly string[];
  /** Principals (globs) who may list and get it; absent: everyone. */
  readonly allow?: readonly string[];
}

/** Everything besides tools that one worker offers. */
export interface Offerings {
  readonly resources: readonly ResourceEntry[];
  readonly templates: readonly ResourceTemplateEntry[];
  readonly prompts: readonly PromptEntry[];
}

/** The entry that serves a resource URI: a static resource, or a template that describes the URI. */
export type ResolvedResource =
  | { readonly kind: 'resource'; readonly entry: ResourceEntry }
  | { readonly kind: 'template'; readonly entry: ResourceTemplateEntry; readonly variables: UriVariables };

export interface OfferingCatalogOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
  /** An entry disappears when no worker has announced it for this long (ms). */
  readonly staleAfterMs?: number;
}

/**
 * The resources, resource templates and prompts workers offer, in Redis beside the tool catalog: workers
 * register them with heartbeats, gateways list them and find the worker queue that reads one.
 */
export class OfferingCatalog {
  readonly resources: Catalog<ResourceEntry>;
  readonly templates: Catalog<ResourceTemplateEntry>;
  readonly prompts: Catalog<PromptEntry>;
  // Parsed templates by their text: parsing is pure, and the set of templates changes rarely.
  readonly #parsed = new Map<string, UriTemplate | null>();

  constructor(options: OfferingCatalogOptions) {
    const common = {
      redis: options.redis,
      ...(options.keys !== undefined && { keys: options.keys }),
      ...(options.staleAfterMs !== undefined && { staleAfterMs: options.staleAfterMs }),
    };
    this.resources = new Catalog<ResourceEntry>({ ...common, kind: 'resources', keyOf: (e) => e.resource.uri });
    this.templates = new Catalog<ResourceTemplateEntry>({
      ...common,
      kind: 'resourceTemplates',
      keyOf: (e) => e.template.uriTemplate,
    });
    this.prompts = new Catalog<PromptEntry>({ ...common, kind: 'prompts', keyOf: (e) => e.prompt.name });
  }

  /** Publishes one worker's offerings (each kind announces its own change). */
  async register(offerings: Offerings): Promise<void> {
    await Promise.all([
      this.resources.register(offerings.resources),
      this.templates.register(offerings.templates),
      this.prompts.register(offerings.prompts),
    ]);
  }

  /**
   * Marks one worker's offerings live now, rewriting their entries without announcing anything: workers with
   * different offerings may name different read queues for a shared entry, and rewriting on every heartbeat
   * keeps each entry pointing at a queue that a live worker consumes.
   */
  async heartbeat(offerings: Offerings): Promise<void> {
    const quiet = { announce: false };
    await Promise.all([
      this.resources.register(offerings.resources, quiet),
      this.templates.register(offerings.templates, quiet),
      this.prompts.register(offerings.prompts, quiet),
    ]);
  }

  /**
   * The entry that reads `uri`: the static resource with exactly that URI, else the first live template (in
   * URI-template order) that describes it; undefined when none does. Entries hidden from `principal` (their
   * `allow`; undefined: a caller without one) are passed over as if absent.
   */
  async resolve(uri: string, principal: string | undefined): Promise<ResolvedResource | undefined> {
    const seen = (entry: Allowed): boolean => visibleTo(entry, principal);
    const entry = await this.resources.get(uri);
    if (entry !== undefined && seen(entry)) return { kind: 'resource', entry };
    for (const template of await this.templates.list()) {
      if (!seen(template)) continue;
      const variables = this.#template(template.template.uriTemplate)?.match(uri);
      if (variables !== undefined) return { kind: 'template', entry: template, variables };
    }
    return undefined;
  }

  #template(text: string): UriTemplate | null {
    let parsed = this.#parsed.get(text);
    if (parsed === undefined) {
      try {
        parsed = new UriTemplate(text);
      } catch {
        // A worker published a template this version cannot read: it serves no URI here.
        parsed = null;
      }
      if (this.#parsed.size >= 1000) this.#parsed.clear();
      this.#parsed.set(text, parsed);
    }
    return parsed;
  }
}
