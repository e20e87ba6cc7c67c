import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { redisConnectionOptions } from '../src/redis.js';

function problems(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('no ConfigError');
}

const options = (env: Record<string, string>) => redisConnectionOptions(loadConfig('worker', [], env).config);

describe('Redis connection settings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskgate-redis-settings-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a plain URL gives one server, nothing else', () => {
    expect(options({ REDIS_URL: 'redis://127.0.0.1:6390' })).toEqual({ url: 'redis://127.0.0.1:6390' });
  });

  it('Sentinel, credentials and a CA file become one RedisConnectionOptions', () => {
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    expect(
      options({
        TASKGATE_REDIS_SENTINELS: 's1.example:26379, [::1]:26380',
        TASKGATE_REDIS_SENTINEL_NAME: 'taskgate',
        TASKGATE_REDIS_USERNAME: 'tg',
        TASKGATE_REDIS_PASSWORD: 'pw-0123',
        TASKGATE_REDIS_TLS_CA_FILE: ca,
      }),
    ).toEqual({
      url: 'redis://127.0.0.1:6379',
      sentinels: [
        { host: 's1.example', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      sentinelName: 'taskgate',
      username: 'tg',
      password: 'pw-0123',
      tlsCa: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
    });
  });

  it('a command timeout other than the default is passed on; one not above the WAIT timeout is refused', () => {
    expect(options({ REDIS_URL: 'redis://h:1', TASKGATE_REDIS_COMMAND_TIMEOUT_MS: '2000' })).toEqual({
      url: 'redis://h:1',
      commandTimeoutMs: 2000,
    });
    expect(options({ REDIS_URL: 'redis://h:1', TASKGATE_REDIS_COMMAND_TIMEOUT_MS: '5000' })).toEqual({
      url: 'redis://h:1',
    });
    expect(
      problems(() =>
        options({
          TASKGATE_REDIS_WAIT_REPLICAS: '1',
          TASKGATE_REDIS_WAIT_TIMEOUT_MS: '3000',
          TASKGATE_REDIS_COMMAND_TIMEOUT_MS: '3000',
        }),
      ),
    ).toEqual([
      'TASKGATE_REDIS_COMMAND_TIMEOUT_MS (3000) must exceed TASKGATE_REDIS_WAIT_TIMEOUT_MS (3000): a WAIT would time out as a command first',
    ]);
  });

  it('cluster nodes are parsed host:port', () => {
    expect(options({ TASKGATE_REDIS_CLUSTER_NODES: 'a:7000,b:7001' }).clusterNodes).toEqual([
      { host: 'a', port: 7000 },
      { host: 'b', port: 7001 },
    ]);
  });

  it('names the setting of every bad value', () => {
    expect(problems(() => loadConfig('worker', [], { TASKGATE_REDIS_SENTINELS: 'a:1,x' }))).toEqual([
      'TASKGATE_REDIS_SENTINELS (--redis-sentinels): "x" is not host:port',
    ]);
    expect(problems(() => loadConfig('gateway', [], { TASKGATE_REDIS_CLUSTER_NODES: 'a:99999' }))).toEqual([
      'TASKGATE_REDIS_CLUSTER_NODES (--redis-cluster-nodes): "a:99999" is not host:port',
    ]);
    expect(problems(() => loadConfig('worker', [], { TASKGATE_REDIS_STRICT: 'yes' }))[0]).toMatch(
      /^TASKGATE_REDIS_STRICT \(--redis-strict\): /,
    );
  });

  it('refuses Sentinel without a master name, and Sentinel with Cluster', () => {
    expect(problems(() => options({ TASKGATE_REDIS_SENTINELS: 'a:26379' }))).toEqual([
      'TASKGATE_REDIS_SENTINELS is set without TASKGATE_REDIS_SENTINEL_NAME (the master to ask for)',
    ]);
    expect(
      problems(() =>
        options({
          TASKGATE_REDIS_SENTINELS: 'a:26379',
          TASKGATE_REDIS_SENTINEL_NAME: 'm',
          TASKGATE_REDIS_CLUSTER_NODES: 'b:7000',
        }),
      ),
    ).toEqual(['TASKGATE_REDIS_CLUSTER_NODES and TASKGATE_REDIS_SENTINELS are both set: choose one topology']);
  });

  it('a CA file that cannot be read is a ConfigError naming the setting', () => {
    const [problem] = problems(() => options({ TASKGATE_REDIS_TLS_CA_FILE: join(dir, 'missing.pem') }));
    expect(problem).toMatch(/^TASKGATE_REDIS_TLS_CA_FILE \(--redis-tls-ca-file\): cannot read .*missing\.pem \(ENOENT/);
  });
});
