import type { Logger } from '@taskgate/core';
import type { ElicitRequestParams, ElicitResult } from '@taskgate/protocol';
import type { InputOptions, ToolClient } from './tool-context.js';

/**
 * What a resource read, prompt or completion handler gets besides its inputs. Reads are quick answers to
 * one request: no progress; questions for the user only in the rounds of revision 2026-07-28 (`elicit`).
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
  /**
   * Asks the user through the client (2026-07-28 multi-round-trip input). A read keeps no state between
   * rounds: the first execution that asks ends the read with `input_required` (the call rejects and the
   * handler's result is not used); the client sends the request again with the answer, and the handler runs
   * again from the start, this time getting the answer under the same key (`options.key`, by default the
   * call's order: `elicit-1`, `elicit-2`, …). So a handler should do nothing it cannot repeat before its
   * questions. Rejects with a `ClientCapabilityError` for a 2025-11-25 client (that revision has no input
   * rounds for reads) or a client that did not declare elicitation: catch it to answer without the input.
   */
  elicit(params: ElicitRequestParams, options?: InputOptions): Promise<ElicitResult>;
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
