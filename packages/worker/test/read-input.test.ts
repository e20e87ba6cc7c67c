import { ProtocolError } from '@taskgate/protocol';
import { describe, expect, it } from 'vitest';
import { ClientCapabilityError } from '../src/index.js';
import { ReadInput } from '../src/read-input.js';

const ask = { message: 'Topic?', requestedSchema: { type: 'object' as const, properties: {} } };
const elicits = { capabilities: { elicitation: {} } };

describe('ReadInput (the questions of one read execution)', () => {
  it('returns the answers it has, notes the questions it has not, keyed by order by default', async () => {
    const input = new ReadInput(
      { input: { answers: { 'elicit-1': { action: 'accept', content: { v: 'a' } } } }, client: elicits },
      elicits,
    );
    await expect(input.elicit(ask)).resolves.toEqual({ action: 'accept', content: { v: 'a' } });
    await expect(input.elicit(ask)).rejects.toThrow("input request 'elicit-2' is waiting for its answer");
    await expect(input.elicit(ask, { key: 'extra' })).rejects.toThrow(/'extra'/);
    expect(input.required()).toEqual({
      resultType: 'input_required',
      inputRequests: {
        'elicit-2': { method: 'elicitation/create', params: ask },
        extra: { method: 'elicitation/create', params: ask },
      },
    });
  });

  it('asks nothing when every question has its answer', async () => {
    const input = new ReadInput({ input: { answers: { t: { action: 'decline' } } }, client: elicits }, elicits);
    await expect(input.elicit(ask, { key: 't' })).resolves.toEqual({ action: 'decline' });
    expect(input.required()).toBeUndefined();
  });

  it('refuses where the client cannot answer: 2025-11-25 reads, no elicitation capability, no URL mode', async () => {
    const old = new ReadInput({ client: elicits }, elicits);
    await expect(old.elicit(ask)).rejects.toBeInstanceOf(ClientCapabilityError);
    const bare = new ReadInput({ input: { answers: {} }, client: { capabilities: {} } }, { capabilities: {} });
    await expect(bare.elicit(ask)).rejects.toThrow(/did not declare the elicitation capability/);
    const formOnly = new ReadInput({ input: { answers: {} }, client: elicits }, elicits);
    const url = { mode: 'url' as const, message: 'Sign in', url: 'https://example.com/a', elicitationId: 'e1' };
    await expect(formOnly.elicit(url)).rejects.toThrow(/URL-mode elicitation/);
    for (const input of [old, bare, formOnly]) expect(input.required()).toBeUndefined();
  });

  it('answers -32602 for an answer that is no elicitation result, and TypeError for bad params', async () => {
    const input = new ReadInput({ input: { answers: { t: { action: 'maybe' } } }, client: elicits }, elicits);
    const rejection = await input.elicit(ask, { key: 't' }).catch((error: unknown) => error);
    expect(rejection).toBeInstanceOf(ProtocolError);
    expect((rejection as ProtocolError).code).toBe(-32602);
    await expect(input.elicit({ message: 7 } as never)).rejects.toBeInstanceOf(TypeError);
  });
});
