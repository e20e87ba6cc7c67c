import { randomUUID } from 'node:crypto';
import type { ToolContext } from '@taskgate/worker';

/** The key under which a 2025-11-25 server marks a message as part of one of its tasks. */
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/**
 * A call in flight on one upstream connection: its task's context, the progress token it sent and, once
 * known, the upstream task id.
 */
export interface RoutedCall {
  readonly ctx: ToolContext;
  readonly progressToken: string;
  /** Aborts once the call has left its connection: what the upstream asked for during it is no longer wanted. */
  readonly ended: AbortSignal;
  upstreamTaskId?: string;
}

const enders = new WeakMap<RoutedCall, AbortController>();

/** A new call for `ctx`, with a progress token unique among the calls of this process. */
export function routedCall(ctx: ToolContext): RoutedCall {
  const ender = new AbortController();
  const call = { ctx, progressToken: randomUUID(), ended: ender.signal };
  enders.set(call, ender);
  return call;
}

/** The upstream task a request or notification names in `_meta`, if it names one. */
function relatedTaskOf(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  const meta = (params as { _meta?: Record<string, unknown> })._meta;
  const related = meta?.[RELATED_TASK];
  if (typeof related !== 'object' || related === null) return undefined;
  const taskId = (related as { taskId?: unknown }).taskId;
  return typeof taskId === 'string' ? taskId : undefined;
}

/**
 * Which call an upstream's request (elicitation, sampling, roots) or log message belongs to. MCP links them
 * to a call only by transport (the call's own response stream) or by `related-task` meta, so a connection
 * that carries several calls at once can route only what names its upstream task; anything else goes to the
 * call when it is the only one, and to none otherwise (never to another principal's task).
 */
export class CallRoutes {
  readonly #calls = new Set<RoutedCall>();

  get size(): number {
    return this.#calls.size;
  }

  /** Adds a call; the returned function removes it (and ends it). */
  add(call: RoutedCall): () => void {
    this.#calls.add(call);
    return () => {
      this.#calls.delete(call);
      enders.get(call)?.abort(new Error('The call ended'));
    };
  }

  /** The call that sent `progressToken`, if it is still in flight. */
  byProgressToken(progressToken: unknown): RoutedCall | undefined {
    for (const call of this.#calls) if (call.progressToken === progressToken) return call;
    return undefined;
  }

  /** The call a message with these params belongs to, or undefined when it cannot be told. */
  route(params: unknown): RoutedCall | undefined {
    const taskId = relatedTaskOf(params);
    if (taskId !== undefined) {
      for (const call of this.#calls) if (call.upstreamTaskId === taskId) return call;
      return undefined;
    }
    if (this.#calls.size !== 1) return undefined;
    return this.#calls.values().next().value;
  }
}
