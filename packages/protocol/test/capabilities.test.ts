import { describe, expect, it } from 'vitest';
import {
  ClientCapabilitiesSchema,
  InitializeResultSchema,
  ListToolsResultSchema,
  ServerCapabilitiesSchema,
  ToolTaskSupportSchema,
} from '../src/index.js';

describe('tasks capabilities', () => {
  it('[CAP-1] reads the server tasks capability (list, cancel, requests.tools.call)', () => {
    const caps = ServerCapabilitiesSchema.parse({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } });
    expect(caps.tasks?.requests?.tools?.call).toEqual({});
    expect(caps.tasks?.list).toEqual({});
  });

  it('[CAP-1] reads the client tasks capability (sampling.createMessage, elicitation.create)', () => {
    const caps = ClientCapabilitiesSchema.parse({
      tasks: { requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
    });
    expect(caps.tasks?.requests?.sampling?.createMessage).toEqual({});
    expect(caps.tasks?.requests?.elicitation?.create).toEqual({});
  });

  it('refuses a boolean where a capability object is expected', () => {
    expect(ServerCapabilitiesSchema.safeParse({ tasks: { list: true } }).success).toBe(false);
    expect(ClientCapabilitiesSchema.safeParse({ tasks: { cancel: 'yes' } }).success).toBe(false);
  });

  it('keeps unknown members of the tasks capability, so newer peers are not misread', () => {
    const caps = ServerCapabilitiesSchema.parse({ tasks: { requests: { tools: { call: {} }, prompts: { get: {} } } } });
    expect(caps.tasks?.requests).toEqual({ tools: { call: {} }, prompts: { get: {} } });
  });

  it('reads the initialize result the broker sends', () => {
    const result = InitializeResultSchema.parse({
      protocolVersion: '2025-11-25',
      capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } },
      serverInfo: { name: 'taskgate', version: '0.1.0' },
    });
    expect(result.serverInfo.name).toBe('taskgate');
  });
});

describe('tool-level negotiation', () => {
  it('[TOOL-1] knows required, optional and forbidden, and nothing else', () => {
    expect(ToolTaskSupportSchema.options).toEqual(['required', 'optional', 'forbidden']);
    const inputSchema = { type: 'object' };
    const page = ListToolsResultSchema.parse({
      tools: [
        { name: 'slow', inputSchema, execution: { taskSupport: 'required' } },
        { name: 'fast', inputSchema },
      ],
    });
    expect(page.tools.map((tool) => tool.execution?.taskSupport ?? 'forbidden')).toEqual(['required', 'forbidden']);
    expect(
      ListToolsResultSchema.safeParse({ tools: [{ name: 'x', inputSchema, execution: { taskSupport: 'maybe' } }] })
        .success,
    ).toBe(false);
  });
});
