import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the proxy forwarded. */
export interface ProxiedRequest {
  readonly method: string;
  /** The JSON-RPC method of a POST body, when it had one. */
  readonly rpcMethod?: string;
  /** Index of the target that got it. */
  readonly target: number;
}

/** Picks the target of a request; undefined leaves it to round robin. */
export type ProxyRoute = (request: { readonly method: string; readonly rpcMethod?: string }) => number | undefined;

/** A load balancer without stickiness for tests: each request goes to the next target in turn. */
export interface RoundRobinProxy extends AsyncDisposable {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Every forwarded request, in arrival order. */
  readonly log: readonly ProxiedRequest[];
  /** Overrides round robin for some requests (tests that must put one call on a given pod); undefined to clear. */
  route: ProxyRoute | undefined;
  /** Closes the listener and every open connection. */
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

function rpcMethodOf(body: Buffer): string | undefined {
  try {
    const value = JSON.parse(body.toString('utf8')) as { method?: unknown };
    return typeof value.method === 'string' ? value.method : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts an HTTP proxy on 127.0.0.1 that spreads requests over `targets` (origins such as
 * `http://127.0.0.1:4001`) in turn, request by request, with no session affinity. Responses stream through
 * unbuffered (SSE works); a client that disconnects aborts the upstream request too.
 */
export async function startRoundRobinProxy(targets: readonly string[]): Promise<RoundRobinProxy> {
  if (targets.length === 0) throw new Error('startRoundRobinProxy needs at least one target');
  const agent = new Agent({ keepAlive: true });
  const log: ProxiedRequest[] = [];
  let next = 0;
  const handle: { route: ProxyRoute | undefined } = { route: undefined };

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const rpcMethod = req.method === 'POST' ? rpcMethodOf(body) : undefined;
    const info = { method: req.method ?? 'GET', ...(rpcMethod !== undefined && { rpcMethod }) };
    const chosen = handle.route?.(info);
    const target = chosen ?? next++ % targets.length;
    log.push({ ...info, target });
    const url = new URL(req.url ?? '/', targets[target]);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())),
    );
    const upstream = request(url, { method: req.method, headers, agent }, (upstreamRes) => {
      const responseHeaders = Object.fromEntries(
        Object.entries(upstreamRes.headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())),
      );
      res.writeHead(upstreamRes.statusCode ?? 502, responseHeaders);
      res.flushHeaders();
      upstreamRes.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    // The client went away before the response ended: so does the upstream request.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => forward(req, res, Buffer.concat(chunks)));
    req.on('error', () => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
      agent.destroy();
    });
    return closed;
  };
  return {
    origin: `http://127.0.0.1:${port}`,
    log,
    get route() {
      return handle.route;
    },
    set route(route: ProxyRoute | undefined) {
      handle.route = route;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
