import { describe, expect, it } from 'vitest';
import { BridgeConfigError, loadBridgeConfig } from '../src/config.js';
import { toolSelected } from '../src/upstream/upstream-catalog.js';

const yaml = `
servers:
  - name: everything
    stdio: { command: mcp-server-everything, args: [stdio], env: { LOG: "\${LOG_LEVEL}", FIXED: "x-\${LOG_LEVEL}-y" }, cwd: /srv }
    tools:
      include: ["trigger-*", get-sum]
      exclude: ["*-url-*"]
      overrides:
        trigger-long-running-operation: { taskSupport: required, description: Runs long., retryOnCrash: true }
  - name: remote
    http: { url: "http://\${HOST}:3001/mcp", headers: { Authorization: "Bearer \${TOKEN}" } }
    prefix: ""
    protocolVersion: 2025-11-25
    taskSupport: required
    inlineWaitMs: 1000
    concurrency: 4
    timeoutMs: 60000
    allow: ["team-a/*", alice]
`;

function problems(text: string, env: NodeJS.ProcessEnv): readonly string[] {
  try {
    loadBridgeConfig(text, env);
  } catch (error) {
    if (error instanceof BridgeConfigError) return error.problems;
    throw error;
  }
  throw new Error('the config was accepted');
}

describe('bridge config: servers', () => {
  it('reads the documented servers with their defaults and the variables read from the environment', () => {
    const config = loadBridgeConfig(yaml, { LOG_LEVEL: 'debug', HOST: '10.0.0.7', TOKEN: 's3cret' });
    expect(config.tools).toEqual([]);
    const [stdio, http] = config.servers;
    expect(stdio).toMatchObject({
      name: 'everything',
      prefix: 'everything_',
      protocolVersion: 'auto',
      taskSupport: 'optional',
      concurrency: 10,
      processes: 1,
      timeoutMs: 3_600_000,
      stdio: {
        command: 'mcp-server-everything',
        args: ['stdio'],
        env: { LOG: 'debug', FIXED: 'x-debug-y' },
        cwd: '/srv',
      },
    });
    expect(stdio?.inlineWaitMs).toBeUndefined();
    expect(stdio?.allow).toBeUndefined();
    expect(stdio?.tools.overrides['trigger-long-running-operation']).toEqual({
      taskSupport: 'required',
      description: 'Runs long.',
      retryOnCrash: true,
    });
    expect(http).toMatchObject({
      prefix: '',
      taskSupport: 'required',
      inlineWaitMs: 1000,
      concurrency: 4,
      timeoutMs: 60_000,
      allow: ['team-a/*', 'alice'],
      http: { url: 'http://10.0.0.7:3001/mcp', headers: { Authorization: 'Bearer s3cret' } },
    });
  });

  it('an unset variable is an error naming its path', () => {
    expect(problems(yaml, { LOG_LEVEL: 'debug' })).toEqual([
      'servers[1].http.url: environment variable HOST is not set',
      'servers[1].http.headers.Authorization: environment variable TOKEN is not set',
    ]);
  });

  it('names the path of every other problem', () => {
    const bad = `
servers:
  - name: Bad_Name
    stdio: { command: x }
    http: { url: http://a/mcp }
  - name: web
    http: { url: ftp://a/mcp }
    processes: 2
  - name: web
    stdio: { command: x }
    protocolVersion: 2026-07-28
  - name: neither
`;
    expect(problems(bad, {})).toEqual([
      'servers[0].name: must be lowercase letters, digits and "-"',
      'servers[0]: needs exactly one of stdio or http',
      'servers[1].processes: applies to stdio servers only',
      'servers[3]: needs exactly one of stdio or http',
    ]);
    const second = bad.replace('Bad_Name', 'ok').replace('    http: { url: http://a/mcp }\n', '');
    expect(problems(second.replace('    processes: 2\n', '').replace('  - name: neither\n', ''), {})).toEqual([
      'servers[1].http.url: must be an http:// or https:// URL',
      'servers[2].name: duplicate server name "web"',
    ]);
  });

  it('takes each protocol revision, and names the path of one it does not know', () => {
    const server = (version: string) =>
      `servers:\n  - name: web\n    http: { url: http://a/mcp }\n    protocolVersion: ${version}\n`;
    for (const version of ['auto', '2025-11-25', '2026-07-28']) {
      expect(loadBridgeConfig(server(version), {}).servers[0]?.protocolVersion).toBe(version);
    }
    expect(problems(server('2024-11-05'), {})).toEqual([
      expect.stringMatching(/^servers\[0\]\.protocolVersion: .*"auto"\|"2025-11-25"\|"2026-07-28"/),
    ]);
  });

  it('include and exclude are globs over the upstream names', () => {
    const config = loadBridgeConfig(yaml, { LOG_LEVEL: 'debug', HOST: 'h', TOKEN: 't' });
    const server = config.servers[0] as NonNullable<(typeof config.servers)[0]>;
    expect(toolSelected(server, 'trigger-long-running-operation')).toBe(true);
    expect(toolSelected(server, 'get-sum')).toBe(true);
    expect(toolSelected(server, 'get-sum-2')).toBe(false);
    expect(toolSelected(server, 'trigger-url-elicitation')).toBe(false);
    expect(toolSelected(server, 'echo')).toBe(false);
  });
});
