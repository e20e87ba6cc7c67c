import type { Tool } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import type { Keys } from '../redis/keys.js';
import { Catalog } from './catalog.js';

/** A tool as workers publish it: its wire description and how the broker runs it. */
export interface CatalogEntry {
  /** What `tools/list` shows, including `execution.taskSupport` and the JSON Schema of the arguments. */
  readonly tool: Tool;
  /** BullMQ queue that the tool's workers consume. */
  readonly queue: string;
  /** Executions per task before it fails (BullMQ attempts). */
  readonly attempts: number;
  /** Delay before a retry (ms), doubled per attempt; whoever enqueues passes it on (ToolJobPolicy.backoffMs). */
  readonly backoffMs?: number;
  /** Text the host may hand the model at once when the tool runs as a task (CRT-5). */
  readonly immediateResponse?: string;
  /** 2026-07-28: gather the tool's first input in multi-round-trip rounds before the call becomes a task. */
  readonly inputBeforeTask?: boolean;
  /**
   * 2026-07-28, a client of the tasks extension calling an `optional` tool: how long the gateway waits for the
   * task it created before answering with the CreateTaskResult (ms; a finished task's result comes inline).
   */
  readonly inlineWaitMs?: number;
  /** Principals (globs) who may list and call the tool; absent: everyone. */
  readonly allow?: readonly string[];
}

export interface ToolCatalogOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
  /** A tool disappears from the catalog when no worker has announced it for this long (ms). */
  readonly staleAfterMs?: number;
  /** How long `get` may answer a found tool from memory (ms; see `CatalogOptions.cacheMs`). Default 0. */
  readonly cacheMs?: number;
}

/**
 * The tools workers offer, in Redis: workers write entries and heartbeats, gateways read the live ones.
 * A tool whose workers all stopped drops out of `tools/list` after `staleAfterMs`.
 */
export class ToolCatalog extends Catalog<CatalogEntry> {
  constructor(options: ToolCatalogOptions) {
    super({ ...options, kind: 'tools', keyOf: (entry) => entry.tool.name });
  }
}
