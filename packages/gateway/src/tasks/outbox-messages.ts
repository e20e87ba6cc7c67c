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
      const params =
        meta === undefined ? message.params : { ...message.params, ...mergeMeta(message.params, meta._meta) };
      return { jsonrpc: '2.0', id: message.requestId, method: message.method, params };
    }
  }
}

function mergeMeta(params: Record<string, unknown>, meta: Record<string, unknown>): { _meta: Record<string, unknown> } {
  return { _meta: { ...((params._meta ?? {}) as Record<string, unknown>), ...meta } };
}
