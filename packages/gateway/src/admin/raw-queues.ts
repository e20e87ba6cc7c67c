import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { catalogQueues, errorMessage, type Logger, type ToolCatalog, type ToolQueues } from '@taskgate/core';
import type { NextFunction, Request, Response, Router } from 'express';

/** Where the raw-queues view lives on the admin listener. */
export const RAW_QUEUES_PATH = '/admin/queues';

/**
 * BullMQ's raw queues through bull-board: every queue of the live tool catalog, re-read at most every few
 * seconds when the view is used (workers add tools while the gateway runs).
 */
export function rawQueues(catalog: ToolCatalog, queues: ToolQueues, logger: Logger): Router[] {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(RAW_QUEUES_PATH);
  const board = createBullBoard({
    queues: [],
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'taskgate' } },
  });
  let readAt = 0;
  const refresh = async (_req: Request, _res: Response, next: NextFunction): Promise<void> => {
    if (Date.now() - readAt > 5000) {
      try {
        const names = catalogQueues(await catalog.list()).sort();
        board.replaceQueues(names.map((name) => new BullMQAdapter(queues.queue(name))));
        readAt = Date.now();
      } catch (error) {
        logger.warn({ err: errorMessage(error) }, 'raw queues: could not read the catalog');
      }
    }
    next();
  };
  return [refresh as unknown as Router, adapter.getRouter() as Router];
}
