import { EventLog } from '@taskgate/core';
import { parseSse, postHeaders, rawCall, rawInitialize, useRedis, waitFor } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { useStacks } from './support/stack.js';

describe('a task stream whose log write ran but whose reply was lost', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('writes the logged event it never wrote before the next one, on the same connection, in log order', async () => {
    const stack = await start();
    const sessionId = await rawInitialize(stack.url);
    // The tool's first progress message turns the tasks/result's wait into a logged stream (its token-less
    // progress is passed over, no event); the tool's result comes 1.5 s later.
    const created = await rawCall(stack.url, sessionId, 'tools/call', {
      name: 'report',
      arguments: { pages: 2, msPerPage: 1500 },
      task: {},
    });
    const { taskId } = (created.json() as { result: { task: { taskId: string } } }).result.task;
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: postHeaders(sessionId),
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tasks/result', params: { taskId } }),
    });
    const reader = response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    const decoder = new TextDecoder();
    let text = '';
    while (parseSse(text).ids.length === 0) text += decoder.decode((await reader.read()).value, { stream: true });
    const streamId = (parseSse(text).ids[0] as string).slice(0, 26);
    let connectionId: string | null = null;
    await waitFor(async () => {
      connectionId = await stack.redis.get(stack.keys.sseConnection(streamId));
      return connectionId !== null;
    }, 'the connection lease');
    // What a connection reset leaves behind: the append ran in Redis, the gateway never saw its reply.
    const log = new EventLog({ redis: stack.redis, keys: stack.keys });
    const orphan = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'logged' } };
    expect(await log.append(streamId, connectionId as unknown as string, JSON.stringify(orphan))).toBeDefined();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const { ids, messages } = parseSse(text);
    expect(messages).toEqual([
      orphan,
      {
        jsonrpc: '2.0',
        id: 9,
        result: {
          content: [{ type: 'text', text: '2 pages' }],
          structuredContent: { pages: 2 },
          _meta: { 'io.modelcontextprotocol/related-task': { taskId } },
        },
      },
    ]);
    // The priming event, then the two logged events, ordinals 1 and 2.
    expect(ids.slice(1).map((id) => id.replace(/^.*-/, ''))).toEqual(['1', '2']);
  });
});
