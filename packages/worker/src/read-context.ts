import type { Logger } from '@taskgate/core';
import type { ToolClient } from './tool-context.js';

/**
 * What a resource read, prompt or completion handler gets besides its inputs. Reads are quick answers to
 * one request: no progress, no questions for the user.
 */
export interface ReadContext {
  /** Aborted when the gateway stops waiting (its read timeout) or the worker shuts down. */
  readonly signal: AbortSignal;
  /** The client that asked, as its session declared it at `initialize`. */
  readonly client: ToolClient;
  /** The authenticated principal that asked, when auth is on. */
  readonly principal: string | undefined;
  /** A logger bound to this read. */
  readonly logger: Logger;
  /** Tells the sessions subscribed to `uri` that it changed (`notifications/resources/updated`). */
  resourceUpdated(uri: string): Promise<void>;
}

/** The context of a resource read: the URI being read, too. */
export interface ResourceReadContext extends ReadContext {
  readonly uri: string;
}

/** What a completion handler gets: the arguments (or template variables) the client resolved already. */
export interface CompletionContext extends ReadContext {
  readonly arguments: Readonly<Record<string, string>>;
}

/** Suggestions for a partial value: the values (best first), or them with how many exist in all. */
export type CompletionReturn =
  | readonly string[]
  | { readonly values: readonly string[]; readonly total?: number; readonly hasMore?: boolean };

/** Suggests values of one prompt argument or template variable for what the user typed so far. */
export type Completer = (value: string, ctx: CompletionContext) => CompletionReturn | Promise<CompletionReturn>;
