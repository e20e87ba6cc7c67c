import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type ForkedProcess, killOnExit } from '@taskgate/test-harness';
import { waitFor } from './support.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The npm-installed reference server, started from its node_modules/.bin entry (its pid is the server's). */
export const EVERYTHING_BIN = `${root}node_modules/.bin/mcp-server-everything`;

/** `mcp-server-everything streamableHttp` on `port`; resolves once it listens. */
export async function startEverythingHttp(port: number): Promise<{ proc: ChildProcess; output: () => string }> {
  const proc = spawn(EVERYTHING_BIN, ['streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  killOnExit(proc);
  await waitFor(() => /listening on port/i.test(output), 'the HTTP server to listen', 20_000);
  return { proc, output: () => output };
}

/** One request the upstream received: its headers and JSON-RPC body. */
export interface Recorded {
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/**
 * A reverse proxy in front of an HTTP upstream that records every request it forwards (headers and body):
 * what the upstream receives, exactly.
 */
export async function startRecordingProxy(targetPort: number): Promise<{
  port: number;
  recorded: Recorded[];
  close: () => Promise<void>;
}> {
  const recorded: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      recorded.push({ headers: { ...req.headers }, body: body.toString() });
      const upstream = httpRequest(
        { host: '127.0.0.1', port: targetPort, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    recorded,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The pid the bridge logged for a server's process the `nth` time it came up (0 first). */
export function upstreamPids(bridge: ForkedProcess, server: string): number[] {
  const pattern = new RegExp(`"server":"${server}","upstreamPid":(\\d+)[^\\n]*"msg":"upstream up"`, 'g');
  return [...bridge.output().matchAll(pattern)].map((match) => Number(match[1]));
}

/** An official SDK client (2025-11-25) of the gateways at `url`, with the given capabilities. */
export async function sdkClient(
  url: string,
  capabilities: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name: 'upstream-test', version: '1.0.0' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** The config entry of the everything server over stdio. */
export function everythingStdio(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'everything', stdio: { command: EVERYTHING_BIN, args: ['stdio'] }, ...extra };
}

/** A span as an OTLP/HTTP JSON export carries it (the fields the tests read). */
export interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly name: string;
  readonly kind: number;
}

/** An OTLP/HTTP receiver on 127.0.0.1: every span exported to it. */
export async function startSpanReceiver(): Promise<{
  endpoint: string;
  spans: () => ExportedSpan[];
  close: () => Promise<void>;
}> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const spans = (): ExportedSpan[] =>
    bodies.flatMap((body) => {
      const parsed = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: ExportedSpan[] }[] }[] };
      return (parsed.resourceSpans ?? []).flatMap((r) => (r.scopeSpans ?? []).flatMap((s) => s.spans ?? []));
    });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
