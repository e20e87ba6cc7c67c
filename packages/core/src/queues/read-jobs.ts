import type { CompleteRequestParams } from '@taskgate/protocol';
import type { TraceCarrier } from '../telemetry/tracing.js';

/**
 * A read a gateway asks a worker to run for a client: `resources/read` (of a static resource, or of a URI a
 * template describes), `prompts/get`, or `completion/complete`. Only what the worker needs; no `_meta`.
 */
export type ReadRequest =
  | {
      readonly method: 'resources/read';
      readonly uri: string;
      /** The URI template that describes `uri`, when no static resource has that URI. */
      readonly uriTemplate?: string;
    }
  | {
      readonly method: 'prompts/get';
      readonly name: string;
      readonly arguments: Readonly<Record<string, string>>;
    }
  | {
      readonly method: 'completion/complete';
      readonly ref: CompleteRequestParams['ref'];
      readonly argument: CompleteRequestParams['argument'];
      readonly context?: { readonly arguments?: Readonly<Record<string, string>> };
    };

/**
 * The BullMQ job of a read. Like a direct tool call it runs under a hidden task record (kind `direct`), so
 * the worker stores its result or JSON-RPC error there and the waiting gateway picks it up.
 */
export interface ReadJobData {
  readonly taskId: string;
  readonly ownerId: string;
  readonly read: ReadRequest;
  /** Digest of the session that created the read's record (`null`: none); see `ToolJobData.session`. */
  readonly session?: string | null;
  /** The authenticated principal's name, when auth is on. */
  readonly principal?: string;
  /** The client's declared capabilities and implementation info, from its session. */
  readonly client?: { readonly capabilities: Record<string, unknown>; readonly info?: Record<string, unknown> };
  /** The trace context of the enqueueing span (see `ToolJobData.trace`). */
  readonly trace?: TraceCarrier;
  /**
   * Present when the request came on a wire with input rounds (2026-07-28): the answers the client gave so
   * far, by input request key. A read that asks for more answers `input_required` (see `ReadInputRequired`).
   */
  readonly input?: { readonly answers: Readonly<Record<string, unknown>> };
}

/** The result of a read that needs answers first: its input requests by key (the 2026-07-28 shape). */
export interface ReadInputRequired {
  readonly resultType: 'input_required';
  readonly inputRequests: Readonly<Record<string, { readonly method: string; readonly params: unknown }>>;
}

/** True for the stored result of a read that asked for input instead of answering. */
export function isReadInputRequired(result: Record<string, unknown>): result is ReadInputRequired & typeof result {
  return result.resultType === 'input_required' && typeof result.inputRequests === 'object';
}

/** True for the job data of a read (as opposed to a tool call). */
export function isReadJob(data: unknown): data is ReadJobData {
  return typeof data === 'object' && data !== null && typeof (data as { read?: unknown }).read === 'object';
}
