import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { Keys, SCRIPT_KEY_COUNTS, type ScriptName } from '../src/index.js';
import { decodeCreateTask, decodeListPage, decodeTransition, Scripts } from '../src/redis/script-replies.js';

const commandsDir = fileURLToPath(new URL('../commands/', import.meta.url));
const read = (file: string): string => readFileSync(`${commandsDir}${file}`, 'utf8');
const codes = new Map(
  [...read('includes/codes.lua').matchAll(/^local (\w+) = (-?\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]),
);

describe('script reply codes', () => {
  it('every script returns codes only by name, and its header documents exactly those codes', () => {
    for (const name of Object.keys(SCRIPT_KEY_COUNTS) as ScriptName[]) {
      const source = read(`${name}-${SCRIPT_KEY_COUNTS[name]}.lua`);
      const [, header = '', body = ''] = /^--\[\[([\s\S]*?)\]\]\n([\s\S]*)$/.exec(source) ?? [];
      expect(body, `${name} returns no literal code`).not.toMatch(/return \{ -?\d/);
      const returned = new Set([...body.matchAll(/return \{ ([A-Z_]+)/g)].map((m) => codes.get(m[1]!)));
      if (body.includes('changeTask(')) returned.add(0);
      if (name === 'listPage') continue; // returns entries, not codes
      expect(returned.has(undefined), `${name} returns only codes of includes/codes.lua`).toBe(false);
      const documented = new Set([...header.matchAll(/^\s+\{ (-?\d+)/gm)].map((m) => Number(m[1])));
      expect([...documented].sort(), `${name}: documented codes`).toEqual([...returned].sort());
    }
  });

  it('decoders refuse replies outside their union, naming the script', () => {
    expect(() => decodeTransition('startTask', [-5])).toThrow('startTask replied [-5]');
    expect(() => decodeTransition('finishTask', [-2, 'nonsense'])).toThrow('finishTask replied [-2,"nonsense"]');
    expect(() => decodeCreateTask([-9])).toThrow('createTask replied [-9]');
    expect(() => decodeCreateTask('OK')).toThrow('createTask replied "OK"');
    expect(() => decodeListPage(['a'])).toThrow('listPage replied ["a"]');
  });
});

describe('typed scripts on Redis', () => {
  const redis = useRedis();

  const setup = () => {
    const conn = redis.connect();
    return { conn, keys: new Keys(redis.prefix), scripts: new Scripts(conn) };
  };

  it('createTask: created, exists, limit with the active count; transitions: changed, terminal, illegal, not_found', async () => {
    const { keys, scripts } = setup();
    const owner = 'owner-digest';
    const create = (id: string) =>
      scripts.createTask(
        [keys.task(id), keys.ownerTasks(owner), keys.ownerActive(owner)],
        [id, 60_000, '', owner, 1, '{"kind":"task"}', '1', 'pod-a', ''],
      );
    const created = await create('t1');
    expect(created.kind).toBe('created');
    if (created.kind === 'created')
      expect(JSON.parse(created.snapshot)).toMatchObject({ taskId: 't1', status: 'working' });
    expect(await create('t1')).toEqual({ kind: 'exists' });
    expect(await create('t2')).toEqual({ kind: 'limit', active: 1 });

    const finish = (id: string, status: string) =>
      scripts.transition(
        'finishTask',
        [keys.task(id), keys.taskChannel(id), keys.task(id), keys.task(id), keys.ownerActive(owner)],
        [id, status, '{"result":{}}', ''],
      );
    expect(await finish('t1', 'working')).toEqual({ kind: 'illegal', status: 'working' });
    expect((await finish('t1', 'completed')).kind).toBe('changed');
    expect(await finish('t1', 'failed')).toEqual({ kind: 'terminal', status: 'completed' });
    expect(await finish('missing', 'completed')).toEqual({ kind: 'not_found' });

    expect(await scripts.listPage([keys.ownerTasks(owner)], [10, '', ''])).toEqual([
      { id: 't1', score: expect.any(Number) },
    ]);
  });

  it('answerInput: recorded with the task id, answered (-10) the second time, not_found for another owner', async () => {
    const { conn, keys, scripts } = setup();
    await conn.hset(keys.inputRequest('r1'), 'owner', 'alice', 'taskId', 't9', 'method', 'elicitation/create');
    const answer = (owner: string) =>
      scripts.answerInput([keys.inputRequest('r1'), keys.inputRequestChannel('r1')], [owner, '{"result":{}}']);
    expect(await answer('mallory')).toEqual({ kind: 'not_found' });
    expect(await answer('alice')).toEqual({ kind: 'recorded', taskId: 't9' });
    expect(await answer('alice')).toEqual({ kind: 'answered' });
  });

  it('lease, streamLease and carrierLease: not_held (-9) when another holds the lease; fenced and not_found apart', async () => {
    const { conn, keys, scripts } = setup();
    expect(await scripts.lease(['L'], ['claim', 'a', 10_000])).toEqual({ kind: 'ok' });
    expect(await scripts.lease(['L'], ['claim', 'b', 10_000])).toEqual({ kind: 'not_held' });
    expect(await scripts.lease(['L'], ['refresh', 'b', 10_000])).toEqual({ kind: 'not_held' });

    const streamLease = (op: string, stream: string) =>
      scripts.streamLease(
        [keys.sessionStream('s'), keys.session('s'), keys.sessionFeed('s')],
        [op, stream, 10_000, 60_000],
      );
    expect(await streamLease('claim', 'g1')).toEqual({ kind: 'not_found' });
    await conn.hset(keys.session('s'), 'owner', 'alice');
    expect(await streamLease('claim', 'g1')).toEqual({ kind: 'ok' });
    expect(await streamLease('claim', 'g2')).toEqual({ kind: 'not_held' });

    await conn.set(keys.sseConnection('st1'), 'c1');
    await conn.set(keys.sseConnection('st2'), 'c2');
    const carrier = (op: string, stream: string, connection: string) =>
      scripts.carrierLease(
        [keys.taskCarrier('t'), keys.sseConnection(stream), keys.task('t'), keys.task('t'), keys.task('t')],
        [op, stream, connection, 10_000, 't'],
      );
    expect(await carrier('claim', 'st1', 'stale')).toEqual({ kind: 'fenced' });
    expect(await carrier('claim', 'st1', 'c1')).toEqual({ kind: 'ok' });
    expect(await carrier('claim', 'st2', 'c2')).toEqual({ kind: 'not_held' });
    expect(await carrier('release', 'st2', 'c2')).toEqual({ kind: 'not_held' });
  });

  it('appendEvent, relayEvent and appendOutbox decode every reply', async () => {
    const { conn, keys, scripts } = setup();
    await conn.set(keys.sseConnection('st'), 'c');
    const streamKeys: [string, string, string] = [keys.sseStream('st'), keys.sseConnection('st'), keys.sseState('st')];
    expect(await scripts.appendEvent(streamKeys, ['other', 'x', 100, 60_000, '{}', 'event', ''])).toEqual({
      kind: 'fenced',
    });
    const appended = await scripts.appendEvent(streamKeys, ['c', 'x', 100, 60_000, '{}', 'event', '']);
    expect(appended).toEqual({ kind: 'appended', entryId: expect.stringMatching(/^\d+-1$/) });
    expect(await scripts.appendEvent(streamKeys, ['c', '', 100, 60_000, '{"done":"1"}', 'state'])).toEqual({
      kind: 'appended',
      entryId: '',
    });

    const relay = (connection: string, mode: string, entry: string) =>
      scripts.relayEvent(
        [...streamKeys, keys.taskCarrier('t'), keys.taskRelay('t')],
        [connection, 'st', mode, entry, 'data', 100, 60_000, Date.now() + 60_000, '', ''],
      );
    expect(await relay('other', 'fallback', '5-0')).toEqual({ kind: 'fenced' });
    expect(await relay('c', 'carrier', '5-0')).toEqual({ kind: 'not_carrier' });
    expect(await relay('c', 'fallback', '5-0')).toEqual({ kind: 'relayed', entryId: expect.stringMatching(/^\d+-2$/) });
    expect(await relay('c', 'fallback', '5-0')).toEqual({ kind: 'stale' });

    const none = keys.task('none');
    const outbox = [none, keys.taskOutbox('none'), keys.taskCarrier('none'), keys.taskChannel('none'), none, none];
    expect(
      await scripts.appendOutbox(outbox as [string, string, string, string, string, string], ['{}', 10, 'none', 'a']),
    ).toEqual({
      kind: 'not_found',
    });
  });
});
