import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type RedisServer, startRedisServer } from '../src/index.js';

/** Sends one command in RESP and resolves with the raw reply (a connection of its own, closed after). */
function command(port: number, ...args: string[]): Promise<string> {
  const request = `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    socket.once('data', (reply) => {
      socket.destroy();
      resolve(reply.toString());
    });
    socket.once('error', reject);
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const started: RedisServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of started.splice(0)) await server.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  vi.unstubAllEnvs();
});

describe('startRedisServer', () => {
  it('starts a server on a loopback port that answers, and stop kills it by its pid', async () => {
    const server = await startRedisServer();
    started.push(server);
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(await command(server.port, 'PING')).toBe('+PONG\r\n');
    expect(await command(server.port, 'CONFIG', 'GET', 'appendonly')).toBe('*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n');
    await server.stop();
    await server.stop(); // twice is safe
    expect(isAlive(server.pid)).toBe(false);
    await expect(command(server.port, 'PING')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('with a dir and appendOnly, keeps every acknowledged write across a kill and a restart on the same port', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dev-redis-test-'));
    dirs.push(dir);
    const first = await startRedisServer({ dir, appendOnly: true });
    expect(await command(first.port, 'SET', 'kept', 'yes')).toBe('+OK\r\n');
    await first.stop();
    const second = await startRedisServer({ dir, appendOnly: true, port: first.port });
    started.push(second);
    expect(second.pid).not.toBe(first.pid);
    expect(await command(second.port, 'GET', 'kept')).toBe('$3\r\nyes\r\n');
  });

  it('passes extra arguments to redis-server', async () => {
    const server = await startRedisServer({ args: ['--maxmemory', '64mb'] });
    started.push(server);
    expect(await command(server.port, 'CONFIG', 'GET', 'maxmemory')).toBe(
      '*2\r\n$9\r\nmaxmemory\r\n$8\r\n67108864\r\n',
    );
  });

  it('names the binary and how to install it when redis-server cannot be run', async () => {
    vi.stubEnv('REDIS_SERVER_BIN', '/nonexistent/redis-server');
    vi.resetModules();
    const fresh = await import('../src/redis-server.js');
    expect(() => fresh.assertRedisServerAvailable()).toThrow(
      "'/nonexistent/redis-server' is needed and could not be run. Install it (Debian/Ubuntu: apt-get install -y redis-server;",
    );
    await expect(fresh.startRedisServer()).rejects.toThrow('could not be run');
  });
});
