import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  forkNode,
  postHeaders,
  raw,
  rawCall,
  rawInitialize,
  startRedis,
  useRedis,
  waitFor,
} from '@taskgate/test-harness';
import { TEST_TOOLS } from '@taskgate/test-harness/tools';
import { createWorker } from '@taskgate/worker';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { forkGateway, waitForOutput } from '../gateway/fixtures/processes.js';

const cli = fileURLToPath(new URL('../../packages/cli/src/run.ts', import.meta.url));

const SECRET = 'cli-process-cursor-secret-0123456789';

describe('taskgate gateway (the CLI process)', () => {
  const redis = useRedis();

  it('drains on SIGTERM: readiness off, 503 + Retry-After for new requests, running calls finish, exit 0', async () => {
    const worker = createWorker({ redis: redis.url, prefix: redis.prefix, tools: TEST_TOOLS });
    const { proc, url } = await forkGateway({
      REDIS_URL: redis.url,
      TASKGATE_KEY_PREFIX: redis.prefix,
      TASKGATE_CURSOR_SECRET: SECRET,
      TASKGATE_DRAIN_TIMEOUT_MS: '10000',
    });
    try {
      await worker.ready;
      const origin = new URL(url).origin;
      expect((await raw(`${origin}/readyz`, { method: 'GET' })).status).toBe(200);
      const sessionId = await rawInitialize(url);
      // The call holds the drain open long enough for readiness to be read off on a loaded machine.
      const call = rawCall(url, sessionId, 'tools/call', { name: 'sleep', arguments: { ms: 5000 } });
      // Awaited below; a failure before then is reported there, not as an unhandled rejection.
      call.catch(() => {});
      await waitFor(() => worker.active === 1, 'the call to start');
      process.kill(proc.pid, 'SIGTERM');
      // A pooled keep-alive socket may be closed under a request (Node's keep-alive timeout): just ask again.
      const readiness = () =>
        fetch(`${origin}/readyz`).then(
          (response) => response.status,
          () => 0,
        );
      await waitFor(async () => (await readiness()) === 503, 'readiness off');
      const refused = await rawCall(url, sessionId, 'ping');
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect((await call).events()).toEqual([
        { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'slept 5000 ms' }] } },
      ]);
      expect(await proc.exited).toBe(0);
      expect(proc.output()).toContain('"msg":"gateway closed"');
    } finally {
      await proc.stop('SIGKILL');
      await worker.close({ deadlineMs: 500 });
    }
  });

  it('checks JWTs against a JWKS file and serves the protected-resource metadata', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskgate-jwks-'));
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'file-key', alg: 'RS256' }] }));
    const { proc, url } = await forkGateway({
      REDIS_URL: redis.url,
      TASKGATE_KEY_PREFIX: redis.prefix,
      TASKGATE_CURSOR_SECRET: SECRET,
      TASKGATE_AUTH: 'jwt',
      TASKGATE_JWKS_FILE: file,
      TASKGATE_JWT_ISSUER: 'https://issuer.example.test',
      TASKGATE_RESOURCE_URL: 'https://mcp.example.test/mcp',
      TASKGATE_JWT_SCOPES: 'mcp',
    });
    try {
      const token = await new SignJWT({ sub: 'carol', scope: 'mcp' })
        .setProtectedHeader({ alg: 'RS256', kid: 'file-key' })
        .setIssuer('https://issuer.example.test')
        .setAudience('https://mcp.example.test/mcp')
        .setExpirationTime('1m')
        .sign(privateKey);
      expect(await rawInitialize(url, { Authorization: `Bearer ${token}` })).toMatch(/^[\x21-\x7e]{32,}$/);
      const refused = await raw(url, { headers: postHeaders(), body: '{}' });
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toBe(
        'Bearer scope="mcp", resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"',
      );
      const metadata = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', url));
      expect(await metadata.json()).toMatchObject({
        resource: 'https://mcp.example.test/mcp',
        authorization_servers: ['https://issuer.example.test'],
        scopes_supported: ['mcp'],
      });
      expect(proc.output()).not.toContain(token);
    } finally {
      await proc.stop('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('waits for a Redis that does not answer yet, then starts', async () => {
    const server = await startRedis();
    process.kill(server.pid, 'SIGSTOP');
    const proc = forkNode(cli, ['gateway'], {
      PORT: '0',
      HOST: '127.0.0.1',
      REDIS_URL: server.url,
      TASKGATE_CURSOR_SECRET: SECRET,
      TASKGATE_REDIS_COMMAND_TIMEOUT_MS: '300',
    });
    try {
      // Stopped, the server takes connections but answers nothing: each check times out, and the gateway waits.
      await waitForOutput(proc, /"attempt":2,[^\n]*"msg":"waiting for Redis to answer before starting"/, 30_000);
      expect(proc.child.exitCode).toBeNull();
      process.kill(server.pid, 'SIGCONT');
      const [, url] = await waitForOutput(proc, /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"gateway listening"/, 30_000);
      expect((await raw(`${new URL(String(url)).origin}/readyz`, { method: 'GET' })).status).toBe(200);
    } finally {
      process.kill(server.pid, 'SIGCONT');
      await proc.stop('SIGTERM');
      await server.stop();
    }
  });
});
