import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ForkedProcess, forkNode, type RedisServer, startRedis, uniquePrefix } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { exportJWK, exportPKCS8, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { waitForOutput } from '../gateway/fixtures/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

export const ISSUER = 'https://issuer.example.test';
export const RESOURCE = 'https://mcp.example.test/mcp';
/** Settings the matrix's limits rows count on. */
export const LIMITS = { sessions: 3, streams: 2, headersTimeoutMs: 1000 } as const;

/** Ids and names with Redis glob, key-separator and hash-tag characters, newlines, spaces, and a very long one. */
export const PROBES = [
  'zqprobe*',
  'zqprobe?',
  'zqprobe[a-z]',
  'zqprobe:x:*',
  'zqprobe{t}',
  'zqprobe}{',
  'zqprobe\nx',
  'zq probe ',
  `zqprobe${'x'.repeat(10_000)}`,
];

/**
 * The body of every 404 for an unknown, ended, expired or foreign session: `id` is the request's (a POST's
 * body is read first), null for a GET or DELETE.
 */
export function sessionNotFound(id: number | null): Record<string, unknown> {
  const message =
    'Session not found: it ended, expired or never existed. Send a new initialize request without Mcp-Session-Id.';
  return { jsonrpc: '2.0', id, error: { code: -32001, message } };
}

/** The JWT gateway's challenge for a refused token (RFC 6750 error and description, RFC 9728 metadata). */
export function jwtChallenge(error: string, description: string): string {
  return (
    `Bearer error="${error}", error_description="${description}", ` +
    `resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"`
  );
}

/** An unsecured JWT (`alg: none`, no signature) with `claims`, issued for this resource, valid for 10 min. */
export function unsignedToken(claims: JWTPayload): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + 600;
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iss: ISSUER, aud: RESOURCE, exp, ...claims })}.`;
}

/** An initialize request (id 0). */
export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'attack', version: '1' } },
});

/** Every line of every process's output. */
export function logLines(processes: readonly ForkedProcess[]): string[] {
  return processes.flatMap((proc) => proc.output().split('\n')).filter((line) => line !== '');
}

/** Where any of `forbidden` (or an ANSI escape) appears in the dump's keys and values or in the log lines. */
export function findLeaks(
  dump: readonly { key: string; text: string }[],
  lines: readonly string[],
  forbidden: readonly string[],
): string[] {
  const places = [
    ...dump.map((entry) => ({ where: `redis ${entry.key}`, text: `${entry.key} ${entry.text}` })),
    ...lines.map((line, i) => ({ where: `log line ${i + 1}`, text: line })),
  ];
  const found: string[] = [];
  for (const { where, text } of places) {
    for (const secret of forbidden) if (text.includes(secret)) found.push(`${where} holds ${secret.slice(0, 24)}…`);
    if (text.includes('\u001b')) found.push(`${where} holds an escape character`);
  }
  return found;
}

/**
 * The attack matrix's deployment: a private Redis, a JWT gateway, a static-token gateway and a worker — the
 * CLI's `taskgate gateway` and `taskgate worker` processes at debug log level — and every secret they know,
 * for the leak check at the end.
 */
export interface AttackStack {
  readonly redis: Redis;
  /** MCP URL of the gateway with JWT auth (JWKS file). */
  readonly jwtUrl: string;
  /** MCP URL of the gateway with static bearer tokens. */
  readonly tokensUrl: string;
  /** The static token of principal `tara` on the tokens gateway. */
  readonly staticToken: string;
  readonly cursorSecret: string;
  /** The processes whose logs the leak check reads. */
  readonly processes: readonly ForkedProcess[];
  /** Every secret the deployment holds: cursor secret, static tokens, the JWKS private keys (JWK `d`, PKCS#8). */
  readonly secrets: string[];
  /** A token signed with the JWKS key (or `key: 'foreign'`, a key the gateway does not know); recorded as a secret. */
  sign(
    claims: JWTPayload,
    options?: { key?: 'jwks' | 'foreign'; expiresAt?: number; audience?: string },
  ): Promise<string>;
  stop(): Promise<void>;
}

export async function startAttackStack(): Promise<AttackStack> {
  const server: RedisServer = await startRedis();
  const redis = new Redis(server.url);
  const dir = mkdtempSync(join(tmpdir(), 'taskgate-attack-'));
  const processes: ForkedProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(processes.map((proc) => proc.stop('SIGTERM', 5000)));
    await redis.quit().catch(() => redis.disconnect());
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const jwks = await generateKeyPair('RS256', { extractable: true });
    const foreign = await generateKeyPair('RS256', { extractable: true });
    const secrets: string[] = [];
    for (const { privateKey } of [jwks, foreign]) {
      const jwk = await exportJWK(privateKey);
      secrets.push(String(jwk.d), String(jwk.p), String(jwk.q));
      // The PEM body without its line breaks, and its first line (a stored copy may be wrapped either way).
      const pem = await exportPKCS8(privateKey);
      const lines = pem.split('\n').filter((line) => line !== '' && !line.startsWith('-----'));
      secrets.push(lines.join(''), lines[1] as string);
    }
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify({ keys: [{ ...(await exportJWK(jwks.publicKey)), kid: 'k1', alg: 'RS256' }] }));
    const cursorSecret = `cursor-${randomBytes(16).toString('hex')}`;
    const staticToken = `static-${randomBytes(16).toString('hex')}`;
    secrets.push(cursorSecret, staticToken);
    const env = {
      REDIS_URL: server.url,
      TASKGATE_KEY_PREFIX: uniquePrefix('attack'),
      TASKGATE_CURSOR_SECRET: cursorSecret,
      LOG_LEVEL: 'debug',
    };
    const gatewayEnv = {
      ...env,
      TASKGATE_PAGE_SIZE: '1',
      TASKGATE_MAX_SESSIONS_PER_PRINCIPAL: String(LIMITS.sessions),
      TASKGATE_MAX_STREAMS_PER_PRINCIPAL: String(LIMITS.streams),
      TASKGATE_HEADERS_TIMEOUT_MS: String(LIMITS.headersTimeoutMs),
    };
    /** A CLI process, recorded for the log check; resolves with what matched `ready` (a loaded machine is slow). */
    const start = async (command: string, processEnv: Record<string, string>, ready: RegExp) => {
      const proc = forkNode(`${root}packages/cli/src/run.ts`, [command], processEnv);
      processes.push(proc);
      return (await waitForOutput(proc, ready, 90_000))[1] as string;
    };
    const listening = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"gateway listening"/;
    const gateway = (extra: Record<string, string>) =>
      start('gateway', { PORT: '0', HOST: '127.0.0.1', ...gatewayEnv, ...extra }, listening);
    const [jwtUrl, tokensUrl] = await Promise.all([
      gateway({
        ...gatewayEnv,
        TASKGATE_AUTH: 'jwt',
        TASKGATE_JWKS_FILE: file,
        TASKGATE_JWT_ISSUER: ISSUER,
        TASKGATE_RESOURCE_URL: RESOURCE,
      }),
      gateway({ TASKGATE_AUTH: 'tokens', TASKGATE_TOKENS: `${staticToken}=tara` }),
      start(
        'worker',
        { ...env, TASKGATE_METRICS_PORT: '0', TASKGATE_TOOLS: `${root}test/security/fixtures/attack-tools.ts` },
        /()"msg":"worker ready"/,
      ),
    ]);
    return {
      redis,
      jwtUrl: jwtUrl as string,
      tokensUrl: tokensUrl as string,
      staticToken,
      cursorSecret,
      processes,
      secrets,
      async sign(claims, options = {}) {
        const { privateKey } = options.key === 'foreign' ? foreign : jwks;
        const token = await new SignJWT(claims)
          .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
          .setIssuer(ISSUER)
          .setAudience(options.audience ?? RESOURCE)
          .setIssuedAt()
          .setExpirationTime(options.expiresAt ?? '10m')
          .sign(privateKey);
        secrets.push(token, token.split('.')[2] as string);
        return token;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Every key of the Redis server with everything it holds, as text (by type; binary-safe enough for markers). */
export async function dumpRedis(redis: Redis): Promise<{ key: string; text: string }[]> {
  const dump: { key: string; text: string }[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      let value: unknown;
      if (type === 'string') value = await redis.get(key);
      else if (type === 'hash') value = await redis.hgetall(key);
      else if (type === 'list') value = await redis.lrange(key, 0, -1);
      else if (type === 'set') value = await redis.smembers(key);
      else if (type === 'zset') value = await redis.zrange(key, 0, -1, 'WITHSCORES');
      else if (type === 'stream') value = await redis.xrange(key, '-', '+');
      else if (type === 'none') continue;
      else throw new Error(`key ${key} has a type the leak check does not read: ${type}`);
      // Raw text (not JSON, which would escape control characters): what Redis holds, byte for byte.
      dump.push({ key, text: flatten(value).join('\n') });
    }
  } while (cursor !== '0');
  return dump;
}

function flatten(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(flatten);
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(flatten);
  return [String(value)];
}

/** An HTTP exchange whose response may never end (an SSE stream): resolves at the response head. */
export interface OpenResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body so far. */
  body(): string;
  close(): void;
}

export function openResponse(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<OpenResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? 'GET', headers: init.headers ?? {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('error', () => {});
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: () => text,
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    if (init.body !== undefined) req.write(init.body);
    req.end();
  });
}

/**
 * Slowloris: opens a socket to the gateway and sends a request line and then one header every `dripMs`,
 * never ending the headers; resolves once the server closes the socket, with what it sent back.
 */
export async function slowHeaders(url: string, dripMs: number): Promise<{ elapsed: number; received: string }> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk;
  });
  const started = Date.now();
  socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  const drip = setInterval(() => socket.write('X-Slow: a\r\n'), dripMs);
  await new Promise((resolve) => socket.once('close', resolve));
  clearInterval(drip);
  return { elapsed: Date.now() - started, received };
}
