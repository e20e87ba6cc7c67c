import { connectClient, useRedis } from '@taskgate/test-harness';
import { ClientCapabilityError, definePrompt } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rev2026Request } from './support/rev2026-07-28.js';
import { useStacks } from './support/stack.js';

const text = { type: 'object' as const, properties: { value: { type: 'string' as const } } };

/** Asks for a topic (key `topic`), then renders; a client that cannot answer gets the prompt without one. */
const brief = definePrompt({
  name: 'brief',
  arguments: z.object({ audience: z.string() }),
  async get({ audience }, ctx) {
    try {
      const answer = await ctx.elicit({ message: 'Topic?', requestedSchema: text }, { key: 'topic' });
      return `Brief ${audience} on ${String(answer.content?.value)}`;
    } catch (error) {
      if (error instanceof ClientCapabilityError) return `Brief ${audience} on anything`;
      throw error;
    }
  },
});

/** Asks two things one after the other, under the default keys. */
const interview = definePrompt({
  name: 'interview',
  async get(_args, ctx) {
    const first = await ctx.elicit({ message: 'First name?', requestedSchema: text });
    const last = await ctx.elicit({ message: `Last name of ${String(first.content?.value)}?`, requestedSchema: text });
    return `Interview ${String(first.content?.value)} ${String(last.content?.value)}`;
  },
});

const elicits = { capabilities: { elicitation: {} } };
const accept = (value: string) => ({ action: 'accept', content: { value } });
const message = (body: string) => ({ messages: [{ role: 'user', content: { type: 'text', text: body } }] });

describe('revision 2026-07-28: reads that ask for input in rounds', () => {
  const redis = useRedis();
  const start = useStacks(redis);
  const withPrompts = () => start({ tools: [], worker: { prompts: [brief, interview] } });

  it('answers prompts/get input_required, then the prompt once the answer comes with the state', async () => {
    const { url } = await withPrompts();
    const params = { name: 'brief', arguments: { audience: 'ops' } };
    const first = await rev2026Request(url, 'prompts/get', params, elicits);
    expect(first.status).toBe(200);
    expect(first.body.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { topic: { method: 'elicitation/create', params: { message: 'Topic?' } } },
    });
    const requestState = first.body.result?.requestState;
    expect(typeof requestState).toBe('string');
    const second = await rev2026Request(
      url,
      'prompts/get',
      { ...params, inputResponses: { topic: accept('Redis') }, requestState },
      elicits,
    );
    expect(second.body.result).toEqual({ ...message('Brief ops on Redis'), resultType: 'complete' });
  });

  it('carries earlier answers in the state: each round brings only its new answer', async () => {
    const { url } = await withPrompts();
    const first = await rev2026Request(url, 'prompts/get', { name: 'interview' }, elicits);
    expect(Object.keys(first.body.result?.inputRequests ?? {})).toEqual(['elicit-1']);
    const second = await rev2026Request(
      url,
      'prompts/get',
      {
        name: 'interview',
        inputResponses: { 'elicit-1': accept('Ada') },
        requestState: first.body.result?.requestState,
      },
      elicits,
    );
    expect(second.body.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { 'elicit-2': { method: 'elicitation/create', params: { message: 'Last name of Ada?' } } },
    });
    const third = await rev2026Request(
      url,
      'prompts/get',
      {
        name: 'interview',
        inputResponses: { 'elicit-2': accept('Lovelace') },
        requestState: second.body.result?.requestState,
      },
      elicits,
    );
    expect(third.body.result).toEqual({ ...message('Interview Ada Lovelace'), resultType: 'complete' });
  });

  it('refuses a state that was altered or issued for other params or another request (-32602)', async () => {
    const { url } = await withPrompts();
    const params = { name: 'brief', arguments: { audience: 'ops' } };
    const state = String((await rev2026Request(url, 'prompts/get', params, elicits)).body.result?.requestState);
    const answers = { topic: accept('Redis') };
    const cases = [
      { ...params, inputResponses: answers, requestState: `${state}x` },
      { name: 'brief', arguments: { audience: 'sales' }, inputResponses: answers, requestState: state },
      { name: 'interview', inputResponses: answers, requestState: state },
    ];
    for (const body of cases) {
      const reply = await rev2026Request(url, 'prompts/get', body, elicits);
      expect([reply.status, reply.body.error?.code]).toEqual([200, -32602]);
      expect(reply.body.error?.message).toMatch(/^Invalid params: requestState /);
    }
    // The same state on tools/call, for a tool of that name, is no tool round either.
    const onTool = await rev2026Request(
      url,
      'tools/call',
      { name: 'brief', arguments: {}, requestState: state },
      elicits,
    );
    expect(onTool.body.error?.code).toBe(-32602);
  });

  it('answers -32602 for answers of the wrong shape, naming the key', async () => {
    const { url } = await withPrompts();
    const params = { name: 'brief', arguments: { audience: 'ops' } };
    const notObject = await rev2026Request(url, 'prompts/get', { ...params, inputResponses: { topic: 7 } }, elicits);
    expect(notObject.body.error).toMatchObject({
      code: -32602,
      message: 'Invalid params: params.inputResponses["topic"] must be an object',
    });
    const notResult = await rev2026Request(
      url,
      'prompts/get',
      { ...params, inputResponses: { topic: { action: 'maybe' } } },
      elicits,
    );
    expect(notResult.body.error?.code).toBe(-32602);
    expect(notResult.body.error?.message).toMatch(/^Invalid params: inputResponses\["topic"\] is not an elicitation/);
  });

  it('lets the handler answer without input where the client cannot be asked (no capability, 2025-11-25)', async () => {
    const { url } = await withPrompts();
    const params = { name: 'brief', arguments: { audience: 'ops' } };
    const bare = await rev2026Request(url, 'prompts/get', params, { capabilities: {} });
    expect(bare.body.result).toEqual({ ...message('Brief ops on anything'), resultType: 'complete' });
    const { client } = await connectClient(url, { capabilities: { elicitation: {} } });
    expect(await client.getPrompt(params)).toEqual(message('Brief ops on anything'));
    // A handler that does not catch it fails the read on the 2025 wire with the reason.
    await expect(client.getPrompt({ name: 'interview' })).rejects.toThrow(/cannot answer input requests of a read/);
  });
});
