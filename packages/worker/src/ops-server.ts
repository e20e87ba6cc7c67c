import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage, type Logger } from '@taskgate/core';
import type { Registry } from 'prom-client';

/** A worker's small HTTP endpoint for operators: `/metrics`, `/healthz`, `/readyz`. */
export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves `/metrics` (Prometheus), `/healthz` (the process runs) and `/readyz` (`ready()` says yes) on
 * `host:port`. Nothing else: no MCP, no tool access.
 */
export async function startOpsServer(options: {
  readonly port: number;
  readonly host: string;
  readonly registry: Registry;
  readonly ready: () => Promise<boolean>;
  /** More of the state `/readyz` shows beside `status` (e.g. a bridge's upstream servers). */
  readonly details?: () => Record<string, unknown>;
  readonly logger: Logger;
}): Promise<OpsServer> {
  const { registry, logger } = options;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string): void => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' }).end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'use GET\n');
    if (path === '/healthz') return send(200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') {
      void options.ready().then(
        (ready) =>
          send(
            ready ? 200 : 503,
            'application/json',
            JSON.stringify({ status: ready ? 'ready' : 'unavailable', ...options.details?.() }),
          ),
        () => send(503, 'application/json', '{"status":"unavailable"}'),
      );
      return;
    }
    if (path === '/metrics') {
      void registry.metrics().then(
        (body) => send(200, registry.contentType, body),
        (error: unknown) => {
          logger.error({ err: errorMessage(error) }, 'metrics collection failed');
          send(500, 'text/plain', 'metrics collection failed\n');
        },
      );
      return;
    }
    send(404, 'text/plain', 'not found: try /metrics, /healthz or /readyz\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  logger.info({ host: options.host, port }, 'worker metrics listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
