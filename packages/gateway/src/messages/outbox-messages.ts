import type { OutboxEntry } from '@taskgate/core';
import { type LoggingLevel, LoggingLevelSchema, type ProgressToken, RELATED_TASK_META_KEY } from '@taskgate/protocol';

/** How one stream turns outbox entries into JSON-RPC messages. */
export interface OutboxRendering {
  /** The token of the request that asked for progress; without one, progress is not sent. */
  readonly progressToken?: ProgressToken;
  /** The least severe log level the session asked for; everything when absent. */
  readonly logLevel?: LoggingLevel;
  /** Adds the related-task `_meta` (META-1) to every message: set for tasks, absent for direct calls. */
  readonly relatedTaskId?: string;
}

const severity = (level: string): number => LoggingLevelSchema.options.indexOf(level as LoggingLevel);

/** The JSON-RPC message for an outbox entry, or undefined when this stream must not carry it. */
export function outboxMessage(entry: OutboxEntry, rendering: OutboxRendering): Record<string, unknown> | undefined {
  const message = entry.message;
  const meta =
    rendering.relatedTaskId === undefined
      ? undefined
      : { _meta: { [RELATED_TASK_META_KEY]: { taskId: rendering.relatedTaskId } } };
  switch (message.type) {
    case 'progress': {
      if (rendering.progressToken === undefined) return undefined;
      const params = {
        progressToken: rendering.progressToken,
        progress: message.progress,
        ...(message.total !== undefined && { total: message.total }),
        ...(message.message !== undefined && { message: message.message }),
        ...meta,
      };
      return { jsonrpc: '2.0', method: 'notifications/progress', params };
    }
    case 'log': {
      if (rendering.logLevel !== undefined && severity(message.level) < severity(rendering.logLevel)) return undefined;
      const params = {
        level: message.level,
        ...(message.logger !== undefined && { logger: message.logger }),
        data: message.data,
        ...meta,
      };
      return { jsonrpc: '2.0', method: 'notifications/message', params };
    }
    case 'request': {
      const { _meta: sent, ...rest } = message.params;
      const merged = requestMeta(sent, meta?._meta);
      const params = merged === undefined ? rest : { ...rest, _meta: merged };
      return { jsonrpc: '2.0', id: message.requestId, method: message.method, params };
    }
  }
}

/**
 * The `_meta` of a relayed request: the related-task key set for a task (INP-2), and removed for a direct
 * call (its hidden record is no task the client knows); other keys the tool sent are kept.
 */
function requestMeta(sent: unknown, related: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const { [RELATED_TASK_META_KEY]: _dropped, ...rest } = (sent ?? {}) as Record<string, unknown>;
  const merged = { ...rest, ...related };
  return Object.keys(merged).length === 0 ? undefined : merged;
}
