import {
  consumeQueue,
  isReadJob,
  Keys,
  type Logger,
  OfferingCatalog,
  type Offerings,
  type ReadJobData,
  TaskgateError,
  type TaskStore,
} from '@taskgate/core';
import type { Redis } from 'ioredis';
import type { AnyPromptDefinition } from './define-prompt.js';
import { toPromptEntry } from './define-prompt.js';
import {
  type ResourceDefinition,
  type ResourceTemplateDefinition,
  toResourceEntry,
  toTemplateEntry,
} from './define-resource.js';
import { type OfferingSet, runRead } from './run-read.js';
import type { TaskWatch } from './task-watch.js';

/** A resource or a resource template definition. */
export type AnyResourceDefinition = ResourceDefinition | ResourceTemplateDefinition;

export interface ReadServerOptions {
  /** A connection BullMQ may share (maxRetriesPerRequest: null). */
  readonly redis: Redis;
  readonly keys: Keys;
  readonly store: TaskStore;
  readonly watch: TaskWatch;
  readonly logger: Logger;
  readonly resources: readonly AnyResourceDefinition[];
  readonly prompts: readonly AnyPromptDefinition[];
  /** Reads one process runs at once per read queue. */
  readonly concurrency: number;
  readonly lockDurationMs: number;
  readonly stalledIntervalMs: number;
  /** Announces `notifications/resources/updated` for a URI. */
  readonly announce: (uri: string) => Promise<void>;
  /** Read queues consumed besides those of the offerings, for offerings published later with `publish`. */
  readonly laterQueues?: readonly string[];
}

/** The part of a worker that serves resources, resource templates, prompts and completions. */
export interface ReadServer {
  /** URIs and URI templates served. */
  readonly resources: readonly string[];
  /** Prompt names served. */
  readonly prompts: readonly string[];
  readonly queues: readonly string[];
  /** Resolves once the read queues are consumed and the offerings are in the catalog (announced). */
  start(): Promise<void>;
  /** Marks the offerings live again (see OfferingCatalog.heartbeat). */
  heartbeat(): Promise<void>;
  /** Publishes the offerings again and announces them (after a reconnect: Redis may have restarted empty). */
  register(): Promise<void>;
  /**
   * Publishes offerings found at run time (their `queue` among `laterQueues`) in place of those published
   * before under the same `group`; the ones left out stop being announced and drop out of the catalog.
   */
  publish(
    group: string,
    resources: readonly AnyResourceDefinition[],
    prompts: readonly AnyPromptDefinition[],
  ): Promise<void>;
  /** Stops taking reads and lets running ones finish. */
  close(): Promise<void>;
}

/** The default read queue of a worker: named after what it offers, so identical workers share it. */
function defaultReadQueue(identities: readonly string[]): string {
  return `reads.${Keys.digest([...identities].sort().join('\n')).slice(0, 16)}`;
}

function invalid(problem: string): TaskgateError {
  return new TaskgateError('INVALID_CONFIG', problem);
}

/** Indexes the definitions by the key the gateway routes with, refusing duplicates and foreign objects. */
function offeringSet(resources: readonly AnyResourceDefinition[], prompts: readonly AnyPromptDefinition[]) {
  const set = {
    resources: new Map<string, ResourceDefinition>(),
    templates: new Map<string, ResourceTemplateDefinition>(),
    prompts: new Map<string, AnyPromptDefinition>(),
  };
  const add = <D>(map: Map<string, D>, key: string, def: D, what: string): void => {
    if (map.has(key)) throw invalid(`Two ${what} are named '${key}': each must be unique`);
    map.set(key, def);
  };
  for (const def of resources) {
    if (def?.kind === 'resource') add(set.resources, def.resource.uri, def, 'resources');
    else if (def?.kind === 'resourceTemplate') add(set.templates, def.template.uriTemplate, def, 'resource templates');
    else throw invalid('resources must be made with defineResource or defineResourceTemplate');
  }
  for (const def of prompts) {
    if (def?.kind !== 'prompt') throw invalid('prompts must be made with definePrompt');
    add(set.prompts, def.prompt.name, def, 'prompts');
  }
  return set;
}

/**
 * Serves reads for a worker: indexes its offerings, consumes their read queues (by default one queue for
 * all of them, named after what the worker offers) and keeps their catalog entries alive. Undefined when
 * the worker offers no resources or prompts.
 */
export function createReadServer(options: ReadServerOptions): ReadServer | undefined {
  const later = options.laterQueues ?? [];
  if (options.resources.length === 0 && options.prompts.length === 0 && later.length === 0) return undefined;
  const set = offeringSet(options.resources, options.prompts);
  const identities = [
    ...set.resources.keys(),
    ...set.templates.keys(),
    ...[...set.prompts.keys()].map((n) => `prompt:${n}`),
  ];
  const shared = defaultReadQueue(identities);
  const offeringsOf = (of: OfferingSet): Offerings => ({
    resources: [...of.resources.values()].map((def) => toResourceEntry(def, shared)),
    templates: [...of.templates.values()].map((def) => toTemplateEntry(def, shared)),
    prompts: [...of.prompts.values()].map((def) => toPromptEntry(def, shared)),
  });
  const offerings = offeringsOf(set);
  const queues = [
    ...new Set([
      ...[...offerings.resources, ...offerings.templates, ...offerings.prompts].map((entry) => entry.queue),
      ...later,
    ]),
  ];
  /** The keys each group published, per kind. */
  const groups = new Map<string, { resources: string[]; templates: string[]; prompts: string[] }>();
  const catalog = new OfferingCatalog({ redis: options.redis, keys: options.keys });
  const deps = {
    store: options.store,
    watch: options.watch,
    logger: options.logger,
    offerings: set,
    announce: options.announce,
  };
  const workers = queues.map((queue) => {
    return consumeQueue<ReadJobData>(
      queue,
      async (job) => {
        if (isReadJob(job.data)) await runRead(deps, job);
        else options.logger.warn({ queue, job: job.name }, 'a job that is not a read reached a read queue; skipped');
      },
      {
        connection: options.redis,
        keys: options.keys,
        concurrency: options.concurrency,
        lockDurationMs: options.lockDurationMs,
        stalledIntervalMs: options.stalledIntervalMs,
        // A stalled read runs once more only to be failed by runRead (it counts the stall); BullMQ must not
        // fail it first, or the gateway would wait for its timeout.
        maxStalledCount: 1_000,
        onError: (error) => options.logger.error({ queue, err: error.message }, 'read worker error'),
      },
    );
  });
  return {
    resources: [...set.resources.keys(), ...set.templates.keys()],
    prompts: [...set.prompts.keys()],
    queues,
    start: async () => {
      await Promise.all(workers.map((worker) => worker.ready()));
      await catalog.register(offerings);
    },
    heartbeat: () => catalog.heartbeat(offeringsOf(set)),
    register: () => catalog.register(offeringsOf(set)),
    publish: async (group, resources, prompts) => {
      const added = offeringSet(resources, prompts);
      const before = groups.get(group);
      for (const key of before?.resources ?? []) set.resources.delete(key);
      for (const key of before?.templates ?? []) set.templates.delete(key);
      for (const key of before?.prompts ?? []) set.prompts.delete(key);
      for (const [key, def] of added.resources) set.resources.set(key, def);
      for (const [key, def] of added.templates) set.templates.set(key, def);
      for (const [key, def] of added.prompts) set.prompts.set(key, def);
      groups.set(group, {
        resources: [...added.resources.keys()],
        templates: [...added.templates.keys()],
        prompts: [...added.prompts.keys()],
      });
      await catalog.register(offeringsOf(added));
    },
    close: async () => {
      await Promise.all(workers.map((worker) => worker.close()));
    },
  };
}
