import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort, type RedisServer, startRedis, uniquePrefix } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The image's contents without a Docker engine: the runtime tree deploy/docker/Dockerfile builds (the same
// deploy/docker/build-runtime.sh, from a copy of the sources outside the workspace), started with plain node from
// its own bin against a real Redis. A runtime dependency missing from it makes the processes fail to start.

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
let work: string;
let tree: string;
let redis: RedisServer;
const started: ChildProcess[] = [];

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
async function dockerfile(): Promise<string[]> {
  const text = await readFile(join(root, 'deploy/docker/Dockerfile'), 'utf8');
  return text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The runtime stage's ENV (the last stage), as the processes here get it; PATH and HOME point into the test's tree. */
async function imageEnv(): Promise<Record<string, string>> {
  const lines = await dockerfile();
  const stage = lines.slice(lines.findLastIndex((line) => line.startsWith('FROM ')));
  const env: Record<string, string> = {};
  for (const line of stage.filter((one) => one.startsWith('ENV '))) {
    for (const [, name = '', value = ''] of line.slice(4).matchAll(/([A-Za-z_]+)=(\S+)/g)) env[name] = value;
  }
  return { ...env, PATH: `${join(tree, 'bin')}:${process.env.PATH ?? ''}`, HOME: work };
}

interface Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<number | string>;
  output(): string;
}

/** `taskgate <args>` from the runtime tree: its bin/taskgate, plain node, the image's environment, cwd its WORKDIR. */
async function taskgate(args: readonly string[], env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, [join(tree, 'bin/taskgate'), ...args], {
    cwd: tree, // the image's WORKDIR
    env: { ...(await imageEnv()), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ?? code ?? 0));
  });
  return { child, exited, output: () => output };
}

async function waitFor(proc: Proc, ready: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => {
    exited = true;
  });
  while (!(await ready().catch(() => false))) {
    if (exited || Date.now() > deadline) throw new Error(`${what} never became ready:\n${proc.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'taskgate-image-'));
  const src = join(work, 'src');
  tree = join(work, 'opt-taskgate');
  // The build context: the repository's files (tracked or new, not ignored), as `COPY . .` sees them.
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  for (const file of stdout.split('\0').filter((name) => name !== '')) {
    await mkdir(dirname(join(src, file)), { recursive: true });
    await copyFile(join(root, file), join(src, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error; // deleted in the working copy, not yet in the index
    });
  }
  await run('sh', [join(src, 'deploy/docker/build-runtime.sh'), src, tree], {
    cwd: work,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_loglevel: 'error' },
  });
  redis = await startRedis();
}, 600_000);

afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await redis?.stop();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
}, 60_000);

describe('the image runtime tree', () => {
  it('is what the Dockerfile builds and runs', async () => {
    const lines = await dockerfile();
    expect(lines).toContain(
      'RUN --mount=type=cache,target=/root/.npm sh deploy/docker/build-runtime.sh /src /opt/taskgate',
    );
    expect(lines).toContain('COPY --from=build /opt/taskgate /opt/taskgate');
    expect(lines.at(-2)).toBe('ENTRYPOINT ["taskgate"]');
    expect(lines.at(-1)).toBe('CMD ["gateway"]');
    expect(lines).toContain('USER 10001:10001');
    const env = await imageEnv();
    expect(env.NODE_ENV).toBe('production');
    expect(env.HOST).toBe('0.0.0.0');
  });

  it('holds the runtime workspaces and production dependencies only, with taskgate on its bin', async () => {
    expect(await readlink(join(tree, 'bin/taskgate'))).toBe('../packages/cli/bin/taskgate.js');
    const { stdout } = await run('ls', [join(tree, 'packages'), join(tree, 'node_modules/@taskgate')]);
    expect(stdout.split('\n').filter((line) => line !== '' && !line.endsWith(':'))).toEqual([
      ...['bridge', 'cli', 'console', 'core', 'dev-redis', 'examples', 'gateway', 'protocol', 'worker'],
      ...['bridge', 'cli', 'console', 'core', 'dev-redis', 'examples', 'gateway', 'protocol', 'worker'],
    ]);
    // Development tools stay out (tsx, vitest, typescript, turbo, biome).
    const { stdout: listed } = await run('ls', [join(tree, 'node_modules')]);
    for (const dev of ['tsx', 'vitest', 'typescript', 'turbo', '@biomejs', 'fast-check']) {
      expect(listed.split('\n')).not.toContain(dev);
    }
  });

  it('runs a gateway, a worker and a bridge: a tool call through the SDK client, the bridged tool listed, all drain on SIGTERM', async () => {
    const port = await freePort();
    const env = {
      REDIS_URL: redis.url,
      TASKGATE_KEY_PREFIX: uniquePrefix('image'),
      TASKGATE_CURSOR_SECRET: 'image-cursor-secret-0123456789',
      HOST: '127.0.0.1',
      PORT: String(port),
    };
    const marker = join(work, 'started');
    await writeFile(marker, '');
    const gateway = await taskgate(['gateway'], env);
    const metricsPort = await freePort();
    const worker = await taskgate(['worker', '--tools', '@taskgate/examples'], {
      ...env,
      TASKGATE_METRICS_HOST: '127.0.0.1',
      TASKGATE_METRICS_PORT: String(metricsPort),
    });
    const origin = `http://127.0.0.1:${port}`;
    await waitFor(gateway, async () => (await fetch(`${origin}/readyz`)).status === 200, 'gateway');
    const metrics = `http://127.0.0.1:${metricsPort}`;
    await waitFor(worker, async () => (await fetch(`${metrics}/readyz`)).status === 200, 'worker');

    // The same image runs the bridge: it offers an existing queue's jobs as a tool.
    const bridgeConfig = join(work, 'bridge.yaml');
    await writeFile(
      bridgeConfig,
      [
        'connections:',
        `  legacy: { url: "${redis.url}/1" }`,
        'tools:',
        '  - name: render_report',
        '    description: Renders a report.',
        '    inputSchema: { type: object, properties: { n: { type: integer } }, required: [n] }',
        '    queue: { name: reports, prefix: bull, connection: legacy }',
        '    job: { name: render }',
        '',
      ].join('\n'),
    );
    const bridgeMetricsPort = await freePort();
    const bridge = await taskgate(['bridge', '--config', bridgeConfig], {
      ...env,
      TASKGATE_METRICS_HOST: '127.0.0.1',
      TASKGATE_METRICS_PORT: String(bridgeMetricsPort),
    });
    const bridgeOps = `http://127.0.0.1:${bridgeMetricsPort}`;
    await waitFor(bridge, async () => (await fetch(`${bridgeOps}/readyz`)).status === 200, 'bridge');

    const client = new Client({ name: 'image-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
    const result = await client.callTool({ name: 'echo', arguments: { text: 'from the image tree' } });
    expect(result.isError ?? false).toBe(false);
    expect(result.content).toEqual([{ type: 'text', text: 'from the image tree' }]);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('render_report');
    await client.close();

    gateway.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    bridge.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    expect(await worker.exited).toBe(0);
    expect(await bridge.exited).toBe(0);
    // Nothing was written in the tree (the image's root filesystem may be read-only).
    const { stdout: written } = await run('find', [tree, '-newer', marker]);
    expect(written).toBe('');
  }, 120_000);

  it("serves the operator console's built page and the raw queues on the admin listener", async () => {
    const adminPort = await freePort();
    const token = 'image-admin-token-0123456789';
    const gateway = await taskgate(['gateway'], {
      REDIS_URL: redis.url,
      TASKGATE_KEY_PREFIX: uniquePrefix('image'),
      TASKGATE_CURSOR_SECRET: 'image-cursor-secret-0123456789',
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      TASKGATE_ADMIN_HOST: '127.0.0.1',
      TASKGATE_ADMIN_PORT: String(adminPort),
      TASKGATE_ADMIN_TOKEN: token,
    });
    const admin = `http://127.0.0.1:${adminPort}`;
    await waitFor(gateway, async () => (await fetch(`${admin}/admin/`)).status === 200, 'admin listener');
    const page = await fetch(`${admin}/admin/`);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    const script = /<script type="module" crossorigin src="([^"]+)">/.exec(html)?.[1];
    expect(script).toMatch(/^\/admin\/assets\/index-[\w-]+\.js$/);
    expect((await fetch(`${admin}${script}`)).status).toBe(200);
    const auth = { headers: { Authorization: `Bearer ${token}` } };
    expect((await fetch(`${admin}/admin/api/workers`)).status).toBe(401);
    expect(await (await fetch(`${admin}/admin/api/workers`, auth)).json()).toEqual({ workers: [] });
    expect((await fetch(`${admin}/admin/queues/`, auth)).status).toBe(200);
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
  }, 60_000);

  it('fails to start when a runtime dependency is missing', async () => {
    await rm(join(tree, 'node_modules/express'), { recursive: true, force: true });
    const gateway = await taskgate(['gateway'], {
      REDIS_URL: redis.url,
      TASKGATE_CURSOR_SECRET: 'image-cursor-secret-0123456789',
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
    });
    expect(await gateway.exited).not.toBe(0);
    expect(gateway.output()).toMatch(/Cannot find package 'express'/);
  }, 60_000);
});
