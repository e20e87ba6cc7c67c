import { ProtocolError } from '@taskgate/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ToolOutputError } from '../src/index.js';
import { protocolErrorOutcome, resultOutcome, toolError } from '../src/outcome.js';

const plain = defineTool({
  name: 'plain',
  description: 'No output schema',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  handler: () => 'x',
});
const structured = defineTool({
  name: 'structured',
  description: 'With an output schema',
  inputSchema: z.object({}),
  outputSchema: z.object({ n: z.number(), label: z.string().default('none') }),
  taskSupport: 'optional',
  handler: () => ({ n: 1 }),
});

describe('outcome mapping', () => {
  it('maps a string to one text content block', () => {
    expect(resultOutcome(plain, 'hello')).toEqual({
      outcome: { result: { content: [{ type: 'text', text: 'hello' }] } },
    });
  });

  it('keeps a CallToolResult exactly as returned, unknown members and _meta included', () => {
    const result = {
      content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }],
      _meta: { 'example.com/trace': 'abc' },
      extra: { kept: true },
    };
    expect(resultOutcome(plain, result)).toEqual({ outcome: { result } });
  });

  it('[ERR-4] marks an isError CallToolResult with a status message that quotes its text', () => {
    const result = { content: [{ type: 'text', text: 'quota exceeded' }], isError: true };
    expect(resultOutcome(plain, result)).toEqual({ outcome: { result }, statusMessage: 'Tool failed: quota exceeded' });
  });

  it('turns an object into structuredContent plus its JSON text when the tool has an outputSchema', () => {
    const structuredContent = { n: 2, label: 'none' };
    expect(resultOutcome(structured, { n: 2 })).toEqual({
      outcome: { result: { content: [{ type: 'text', text: '{"n":2,"label":"none"}' }], structuredContent } },
    });
  });

  it('refuses output that breaks the outputSchema, including a CallToolResult without structuredContent', () => {
    expect(() => resultOutcome(structured, { n: 'two' })).toThrow(ToolOutputError);
    expect(() => resultOutcome(structured, { content: [] })).toThrow(
      "The tool's structuredContent does not match its outputSchema",
    );
    expect(resultOutcome(structured, { content: [], structuredContent: { n: 3 } })).toEqual({
      outcome: { result: { content: [], structuredContent: { n: 3 } } },
    });
    // An error result needs no structured content.
    expect(resultOutcome(structured, { content: [], isError: true }).outcome).toEqual({
      result: { content: [], isError: true },
    });
  });

  it('refuses a malformed CallToolResult', () => {
    expect(() => resultOutcome(plain, { content: [{ type: 'text' }] })).toThrow(/invalid CallToolResult: content.0/);
  });

  it('turns other values into JSON text, and nothing into no content', () => {
    expect(resultOutcome(plain, { a: 1 })).toEqual({
      outcome: { result: { content: [{ type: 'text', text: '{"a":1}' }] } },
    });
    expect(resultOutcome(plain, 42)).toEqual({ outcome: { result: { content: [{ type: 'text', text: '42' }] } } });
    expect(resultOutcome(plain, undefined)).toEqual({ outcome: { result: { content: [] } } });
    expect(() => resultOutcome(plain, () => 1)).toThrow('The tool returned a function, which is not JSON');
  });

  it('[ERR-5] stores a ProtocolError as the JSON-RPC error, data included', () => {
    expect(protocolErrorOutcome(new ProtocolError(-32602, 'Unknown city', { city: 'X' }))).toEqual({
      outcome: { error: { code: -32602, message: 'Unknown city', data: { city: 'X' } } },
      statusMessage: 'Unknown city',
    });
    expect(protocolErrorOutcome(new ProtocolError(-32603, 'Upstream down')).outcome).toEqual({
      error: { code: -32603, message: 'Upstream down' },
    });
  });

  it('[ERR-4] builds tool errors as isError results with a status message', () => {
    expect(toolError('disk full')).toEqual({
      outcome: { result: { content: [{ type: 'text', text: 'disk full' }], isError: true } },
      statusMessage: 'Tool failed: disk full',
    });
  });
});
