import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, postHeaders, raw, rawInitialize, scrape, useRedis } from '@taskgate/test-harness';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useStacks } from './support/stack.js';

const ISSUER = 'https://auth.example.test';
const AUDIENCE = 'https://mcp.example.test/mcp';

type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let signing: Key;
let stranger: Key;
let jwks: { keys: JWK[] };
let jwksServer: Server;
let jwksUrl: URL;
let jwksFetches = 0;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256');
  signing = pair.privateKey;
  stranger = (await generateKeyPair('ES256')).privateKey;
  jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
  jwksServer = createServer((_req, res) => {
    jwksFetches++;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksUrl = new URL(`http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`);
});
afterAll(async () => {
  await new Promise((resolve) => jwksServer.close(resolve));
});

/** An access token; `claims` override the defaults (sub alice, the right issuer and audience, scope tasks:run). */
function token(claims: Record<string, unknown> = {}, options: { key?: Key; expiresIn?: string } = {}): Promise<string> {
  return new SignJWT({ sub: 'alice', scope: 'tasks:run profile', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(typeof claims.iss === 'string' ? claims.iss : ISSUER)
    .setAudience(typeof claims.aud === 'string' ? claims.aud : AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '5m')
    .sign(options.key ?? signing);
}

const bearer = (value: string) => ({ Authorization: `Bearer ${value}` });

describe('JWT authentication (OAuth access tokens, JWKS)', () => {
  const redis = useRedis();
  const start = useStacks(redis);
  const jwtAuth = (extra: Record<string, unknown> = {}) =>
    ({
      mode: 'jwt',
      jwks: jwksUrl,
      issuer: ISSUER,
      audience: AUDIENCE,
      requiredScopes: ['tasks:run'],
      ...extra,
    }) as const;

  it('answers 401 with a Bearer challenge naming resource_metadata and scope, and 403 for a missing scope', async () => {
    const { url } = await start({ tools: false, gateway: { auth: jwtAuth() } });
    const origin = new URL(url).origin;
    const metadata = `${origin}/.well-known/oauth-protected-resource/mcp`;

    const missing = await raw(url, { headers: postHeaders(), body: '{}' });
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe(`Bearer scope="tasks:run", resource_metadata="${metadata}"`);

    const cases: [string, string][] = [
      [await token({ aud: 'https://someone-else.example' }), 'The access token is not valid'],
      [await token({ iss: 'https://evil.example' }), 'The access token is not valid'],
      [await token({}, { key: stranger }), 'The access token is not valid'],
      [await token({}, { expiresIn: '-1m' }), 'The access token expired'],
      [await token({ sub: undefined }), "The access token has no 'sub' claim"],
      ['not-a-jwt', 'The access token is not valid'],
    ];
    for (const [value, description] of cases) {
      const refused = await raw(url, { headers: postHeaders(undefined, bearer(value)), body: '{}' });
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toBe(
        `Bearer error="invalid_token", error_description="${description}", scope="tasks:run", resource_metadata="${metadata}"`,
      );
    }

    const narrow = await raw(url, {
      headers: postHeaders(undefined, bearer(await token({ scope: 'profile' }))),
      body: '{}',
    });
    expect(narrow.status).toBe(403);
    expect(narrow.headers['www-authenticate']).toBe(
      `Bearer error="insufficient_scope", error_description="The access token lacks a required scope", scope="tasks:run", resource_metadata="${metadata}"`,
    );
    expect(narrow.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Forbidden: the access token lacks a required scope (tasks:run)' },
    });

    const metrics = await scrape(`${origin}/metrics`);
    expect(metrics.value('taskgate_auth_failures_total', { reason: 'missing_token' })).toBe(1);
    expect(metrics.value('taskgate_auth_failures_total', { reason: 'invalid_token' })).toBe(6);
    expect(metrics.value('taskgate_auth_failures_total', { reason: 'insufficient_scope' })).toBe(1);
    // The keys were fetched from the JWKS URL once and then cached.
    expect(jwksFetches).toBeGreaterThanOrEqual(1);
    expect(jwksFetches).toBeLessThanOrEqual(2);
  });

  it('serves RFC 9728 protected-resource metadata at the root and the path-suffixed well-known URL', async () => {
    const { url } = await start({
      tools: false,
      gateway: { auth: jwtAuth({ resource: AUDIENCE, audience: undefined }) },
    });
    const origin = new URL(url).origin;
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const response = await fetch(`${origin}${path}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        resource: AUDIENCE,
        authorization_servers: [ISSUER],
        scopes_supported: ['tasks:run'],
        bearer_methods_supported: ['header'],
        resource_name: 'taskgate',
      });
    }
    // The configured resource URL is the default audience, and names the metadata in challenges.
    const missing = await raw(url, { headers: postHeaders(), body: '{}' });
    expect(missing.headers['www-authenticate']).toBe(
      'Bearer scope="tasks:run", resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"',
    );
    expect(await rawInitialize(url, bearer(await token()))).toMatch(/^[\x21-\x7e]{32,}$/);
  });

  it('[SEC-1] binds tasks to the token subject: another subject cannot read them, a second session of the same one can', async () => {
    const { url } = await start({ gateway: { auth: jwtAuth() } });
    const alice = (await connectClient(url, { token: await token() })).client;
    const aliceAgain = (await connectClient(url, { token: await token() })).client;
    const bob = (await connectClient(url, { token: await token({ sub: 'bob' }) })).client;
    const created = await alice.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 0 }, task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    expect(await aliceAgain.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: 'slept 0 ms' }],
    });
    await expect(bob.experimental.tasks.getTask(taskId)).rejects.toThrow('Task not found');
    expect((await bob.experimental.tasks.listTasks()).tasks).toEqual([]);
  });

  it('takes the principal from a configured claim', async () => {
    const { url } = await start({ tools: false, gateway: { auth: jwtAuth({ principalClaim: 'email' }) } });
    const sessionId = await rawInitialize(url, bearer(await token({ email: 'alice@example.test' })));
    // The same email under another subject is the same principal: the session is theirs.
    const ping = await raw(url, {
      headers: postHeaders(sessionId, bearer(await token({ sub: 'other', email: 'alice@example.test' }))),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(ping.status).toBe(200);
    const foreign = await raw(url, {
      headers: postHeaders(sessionId, bearer(await token({ email: 'mallory@example.test' }))),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(foreign.status).toBe(404);
    const noClaim = await raw(url, { headers: postHeaders(undefined, bearer(await token())), body: '{}' });
    expect(noClaim.status).toBe(401);
  });
});
