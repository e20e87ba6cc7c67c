import { decodeTaskMessage, type EventBus, errorMessage, type Logger } from '@taskgate/core';
import type { Request, Response } from 'express';

/**
 * `GET /admin/api/events`: every task's status changes as Server-Sent Events (`event: task`, data: id, status,
 * status message, tool, last update), from the task channels through one pattern subscription per gateway,
 * with a comment every `heartbeatMs` to keep proxies from closing the connection.
 */
export function taskEvents(bus: EventBus, heartbeatMs: number, logger: Logger) {
  return async (req: Request, res: Response): Promise<void> => {
    const write = (text: string): void => {
      if (!res.writableEnded) res.write(text);
    };
    const listener = (taskId: string, message: string): void => {
      // A payload that is not a snapshot is not news for the console.
      const record = decodeTaskMessage(taskId, message)?.task;
      if (record === undefined) return;
      const event = {
        taskId,
        status: record.status,
        ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
        ...(record.tool !== undefined && { tool: record.tool }),
        lastUpdatedAt: record.lastUpdatedAt,
      };
      write(`event: task\ndata: ${JSON.stringify(event)}\n\n`);
    };
    let unsubscribe: (() => Promise<void>) | undefined;
    try {
      unsubscribe = await bus.onEveryTaskChange(listener);
    } catch (error) {
      logger.warn({ err: errorMessage(error) }, 'admin events unavailable');
      res.status(503).json({ error: `Live updates are unavailable: ${errorMessage(error)}` });
      return;
    }
    res.status(200).set({
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
    });
    res.flushHeaders();
    write(': connected\n\n');
    const heartbeat = setInterval(() => write(': heartbeat\n\n'), heartbeatMs);
    heartbeat.unref();
    req.once('close', () => {
      clearInterval(heartbeat);
      void unsubscribe?.();
    });
  };
}
