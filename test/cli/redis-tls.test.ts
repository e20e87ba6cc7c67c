import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forkNode, freePort, rawCall, rawInitialize, uniquePrefix } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkGateway, waitForOutput } from '../gateway/fixtures/processes.js';

// A Redis that speaks TLS only and knows one ACL user (the default user is off): a gateway and a worker reach
// it with `rediss://`, TASKGATE_REDIS_TLS_CA_FILE, TASKGATE_REDIS_USERNAME and TASKGATE_REDIS_PASSWORD, and
// run a task; the password appears in no log line.

const root = new URL('../../', import.meta.url).pathname;
const PASSWORD = 'tls-test-password-0123456789';
let dir: string;
let port: number;
let redisPid: number | undefined;

/** A CA and a server certificate for 127.0.0.1 signed by it (openssl), in `dir`. */
function makeCertificates(): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=taskgate-test-ca',
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=127.0.0.1',
  );
  writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '1',
    '-extfile',
    'san.cnf',
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'taskgate-tls-'));
  makeCertificates();
  port = await freePort();
  const child = spawn(
    process.env.REDIS_SERVER_BIN ?? 'redis-server',
    [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--tls-cert-file',
      join(dir, 'server.crt'),
      '--tls-key-file',
      join(dir, 'server.key'),
      '--tls-ca-cert-file',
      join(dir, 'ca.crt'),
      '--tls-auth-clients',
      'no',
      '--user',
      'default',
      'off',
      '--user',
      'app',
      'on',
      `>${PASSWORD}`,
      '~*',
      '&*',
      '+@all',
    ],
    { stdio: 'ignore' },
  );
  redisPid = child.pid;
  // Ready once a TLS client with the user's password is answered.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = new Redis({
      port,
      host: '127.0.0.1',
      username: 'app',
      password: PASSWORD,
      tls: { ca: readFileSync(join(dir, 'ca.crt')) },
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => {});
    const ok = await probe.connect().then(
      () => probe.ping(),
      () => undefined,
    );
    probe.disconnect();
    if (ok === 'PONG') break;
    if (Date.now() > deadline) throw new Error('the TLS redis-server did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 30_000);

afterAll(() => {
  if (redisPid !== undefined) process.kill(redisPid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('Redis over TLS with an ACL user', () => {
  it('a gateway and a worker run a task through rediss:// with the CA file, user and password; no log shows the password', async () => {
    const env = {
      REDIS_URL: `rediss://127.0.0.1:${port}`,
      TASKGATE_REDIS_TLS_CA_FILE: join(dir, 'ca.crt'),
      TASKGATE_REDIS_USERNAME: 'app',
      TASKGATE_REDIS_PASSWORD: PASSWORD,
      TASKGATE_KEY_PREFIX: uniquePrefix('tls'),
      TASKGATE_CURSOR_SECRET: 'tls-cursor-secret-0123456789',
      TASKGATE_METRICS_PORT: String(await freePort()),
    };
    const worker = forkNode(`${root}packages/cli/src/run.ts`, ['worker', '--tools', '@taskgate/examples'], env);
    const { proc: gateway, url } = await forkGateway(env);
    try {
      await waitForOutput(worker, /worker ready/, 60_000);
      const sessionId = await rawInitialize(url);
      const created = (
        await rawCall(url, sessionId, 'tools/call', { name: 'sleep', arguments: { ms: 50 }, task: {} })
      ).json() as {
        result: { task: { taskId: string } };
      };
      const result = await rawCall(url, sessionId, 'tasks/result', { taskId: created.result.task.taskId });
      const messages = result.events().length > 0 ? result.events() : [result.json()];
      expect(messages.at(-1)).toMatchObject({ result: { content: [{ type: 'text', text: 'slept 50 ms' }] } });
    } finally {
      await Promise.all([gateway.stop('SIGTERM', 5000), worker.stop('SIGTERM', 5000)]);
    }
    expect(gateway.output() + worker.output()).not.toContain(PASSWORD);
  }, 90_000);

  it('a wrong password stops the process at start-up with the reason, the password in no output', async () => {
    const wrong = 'wrong-password-0123456789';
    const worker = forkNode(`${root}packages/cli/src/run.ts`, ['worker', '--tools', '@taskgate/examples'], {
      REDIS_URL: `rediss://127.0.0.1:${port}`,
      TASKGATE_REDIS_TLS_CA_FILE: join(dir, 'ca.crt'),
      TASKGATE_REDIS_USERNAME: 'app',
      TASKGATE_REDIS_PASSWORD: wrong,
      TASKGATE_METRICS_PORT: String(await freePort()),
    });
    const code = await Promise.race([
      worker.exited,
      new Promise((resolve) => setTimeout(() => resolve('running'), 30_000)),
    ]);
    if (code === 'running') await worker.stop('SIGKILL');
    expect(code).not.toBe('running');
    expect(code).not.toBe(0);
    expect(worker.output()).toMatch(/WRONGPASS|invalid username-password/);
    expect(worker.output()).not.toContain(wrong);
  }, 60_000);
});
