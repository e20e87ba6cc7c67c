import { describe, expect, it } from 'vitest';
import { QUIET_ID_MAX, QuietIds } from '../src/streams/quiet-id.js';

const STREAM = 'AbCdEfGhIjKlMnOpQrStUvWxYz';

describe('quiet stream ids', () => {
  const ids = new QuietIds('a-secret-of-the-deployment-0123456789');

  it('names the stream, the task and the request, for the session that was given it only', () => {
    const id = ids.encode('session-a', { streamId: STREAM, taskId: 'task-1', rpcId: 'r"1\n' }) as string;
    expect(id).toMatch(/^AbCdEfGhIjKlMnOpQrStUvWxYz_0-0\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(QuietIds.looksQuiet(id)).toBe(true);
    expect(ids.decode('session-a', id)).toEqual({ streamId: STREAM, taskId: 'task-1', rpcId: 'r"1\n' });
    expect(ids.decode('session-b', id)).toBeUndefined();
    const numeric = ids.encode('session-a', { streamId: STREAM, taskId: 'task-1', rpcId: 7 }) as string;
    expect(ids.decode('session-a', numeric)?.rpcId).toBe(7);
  });

  it('refuses an altered id, another secret, and ids of other shapes', () => {
    const id = ids.encode('s', { streamId: STREAM, taskId: 'task-1', rpcId: 1 }) as string;
    const [head, payload, mac] = id.split('.') as [string, string, string];
    const otherPayload = Buffer.from(JSON.stringify(['task-2', 1])).toString('base64url');
    expect(ids.decode('s', `${head}.${otherPayload}.${mac}`)).toBeUndefined();
    expect(ids.decode('s', `${head}.${payload}.${mac.slice(1)}A`)).toBeUndefined();
    expect(new QuietIds('another-secret').decode('s', id)).toBeUndefined();
    expect(ids.decode('s', `${STREAM}_0-0`)).toBeUndefined();
    expect(QuietIds.looksQuiet(`${STREAM}_1700000000000-1`)).toBe(false);
  });

  it('gives no id for a request id that would make it longer than QUIET_ID_MAX', () => {
    expect(ids.encode('s', { streamId: STREAM, taskId: 'task-1', rpcId: 'x'.repeat(QUIET_ID_MAX) })).toBeUndefined();
  });
});
