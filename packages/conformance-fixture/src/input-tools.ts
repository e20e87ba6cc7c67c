import { ErrorCode, ProtocolError } from '@taskgate/protocol';
import { defineTool } from '@taskgate/worker';
import { z } from 'zod';

// Tools of the 2026-07-28 scenarios that ask the client for input while they run (multi-round-trip input).
// A worker tool asks as it always does (ctx.elicit, ctx.sample, ctx.listRoots); the `key` option names the
// request among the `inputRequests` a 2026-07-28 client sees. A 2025-11-25 client gets the same requests relayed.

const none = z.object({});
const nameSchema = {
  type: 'object' as const,
  properties: { name: { type: 'string' as const } },
  required: ['name'],
};
const textOf = (content: unknown): string => {
  const block = Array.isArray(content) ? content[0] : content;
  return (block as { type?: string; text?: string } | undefined)?.type === 'text'
    ? String((block as { text: string }).text)
    : JSON.stringify(block);
};

export const inputElicitation = defineTool({
  name: 'test_input_required_result_elicitation',
  description: 'Asks for a name (key user_name), then greets.',
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    const answer = await ctx.elicit(
      { message: 'What is your name?', requestedSchema: nameSchema },
      { key: 'user_name' },
    );
    return `Hello, ${String(answer.content?.name ?? 'unknown')}!`;
  },
});

export const inputSampling = defineTool({
  name: 'test_input_required_result_sampling',
  description: "Asks the client's model a question (key capital_question) and answers what it said.",
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    const answer = await ctx.sample(
      {
        messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
        maxTokens: 100,
      },
      { key: 'capital_question' },
    );
    return `The model said: ${textOf(answer.content)}`;
  },
});

export const inputListRoots = defineTool({
  name: 'test_input_required_result_list_roots',
  description: "Asks for the client's roots (key client_roots) and lists them.",
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    const { roots } = await ctx.listRoots({ key: 'client_roots' });
    return `Roots: ${roots.map((root) => root.uri).join(', ')}`;
  },
});

export const inputRequestState = defineTool({
  name: 'test_input_required_result_request_state',
  description: 'Asks for a confirmation (key confirm); the answer arrives with the signed requestState.',
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    const answer = await ctx.elicit(
      {
        message: 'Please confirm',
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      },
      { key: 'confirm' },
    );
    return `state-ok: confirmed=${String(answer.content?.ok ?? false)}`;
  },
});

export const inputMultiple = defineTool({
  name: 'test_input_required_result_multiple_inputs',
  description: 'Asks three things at once: a name, a greeting from the model and the roots.',
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    const [name, greeting, roots] = await Promise.all([
      ctx.elicit({ message: 'What is your name?', requestedSchema: nameSchema }, { key: 'user_name' }),
      ctx.sample(
        { messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 },
        { key: 'greeting' },
      ),
      ctx.listRoots({ key: 'client_roots' }),
    ]);
    return `${textOf(greeting.content)} ${String(name.content?.name ?? '')} (${roots.roots.length} roots)`;
  },
});

export const inputMultiRound = defineTool({
  name: 'test_input_required_result_multi_round',
  description: 'Asks two questions one after the other (keys step1, step2).',
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    const first = await ctx.elicit(
      { message: 'Step 1: What is your name?', requestedSchema: nameSchema },
      { key: 'step1' },
    );
    const second = await ctx.elicit(
      {
        message: 'Step 2: What is your favourite colour?',
        requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
      },
      { key: 'step2' },
    );
    return `${String(first.content?.name ?? '')} likes ${String(second.content?.color ?? '')}`;
  },
});

export const inputTampered = defineTool({
  name: 'test_input_required_result_tampered_state',
  description: 'Asks for a confirmation (key confirm); an altered requestState is refused by the gateway.',
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    await ctx.elicit(
      {
        message: 'Please confirm',
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      },
      { key: 'confirm' },
    );
    return 'confirmed';
  },
});

export const inputCapabilities = defineTool({
  name: 'test_input_required_result_capabilities',
  description: 'Asks only what the client declared it can answer (elicitation, sampling).',
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    const { elicitation, sampling } = ctx.client.capabilities;
    const asked = await Promise.all([
      elicitation === undefined
        ? undefined
        : ctx.elicit({ message: 'What is your name?', requestedSchema: nameSchema }, { key: 'user_name' }),
      sampling === undefined
        ? undefined
        : ctx.sample(
            { messages: [{ role: 'user', content: { type: 'text', text: 'Say hello' } }], maxTokens: 20 },
            { key: 'hello' },
          ),
    ]);
    return `Asked ${asked.filter((answer) => answer !== undefined).length} question(s).`;
  },
});

export const missingCapability = defineTool({
  name: 'test_missing_capability',
  description: 'Needs sampling: without it the call is refused with -32021 naming the capability.',
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    if (ctx.client.capabilities.sampling === undefined) {
      throw new ProtocolError(ErrorCode.MissingClientCapability, 'Missing required client capability: sampling', {
        requiredCapabilities: { sampling: {} },
      });
    }
    const answer = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }],
      maxTokens: 10,
    });
    return textOf(answer.content);
  },
});

export const streamingElicitation = defineTool({
  name: 'test_streaming_elicitation',
  description: 'Asks for a name while it runs: an input request, never a request on the response stream.',
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    const answer = await ctx.elicit(
      { message: 'What is your name?', requestedSchema: nameSchema },
      { key: 'user_name' },
    );
    return `Hello, ${String(answer.content?.name ?? 'unknown')}!`;
  },
});

export const loggingTool = defineTool({
  name: 'test_logging_tool',
  description: 'Logs three messages; a client that set no log level gets none of them.',
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    for (const step of ['started', 'working', 'done']) await ctx.log('info', `logging tool ${step}`);
    return 'Logged three messages.';
  },
});

export const paramHeader = defineTool({
  name: 'test_param_header',
  description: 'Echoes its region; on 2026-07-28 the region travels in the Mcp-Param-Region header too.',
  inputSchema: {
    type: 'object',
    properties: { region: { type: 'string', 'x-mcp-header': 'Region', description: 'Where to run' } },
    required: ['region'],
  },
  taskSupport: 'forbidden',
  handler: (args) => `Region: ${String((args as { region?: unknown }).region)}`,
});

export const triggerToolChange = defineTool({
  name: 'test_trigger_tool_change',
  description: 'Announces that the tool list changed (list_changed news for the streams that asked).',
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    await ctx.listChanged('tools');
    return 'Announced a tool list change.';
  },
});

export const triggerPromptChange = defineTool({
  name: 'test_trigger_prompt_change',
  description: 'Announces that the prompt list changed (list_changed news for the streams that asked).',
  inputSchema: none,
  taskSupport: 'forbidden',
  async handler(_args, ctx) {
    await ctx.listChanged('prompts');
    return 'Announced a prompt list change.';
  },
});

export const inputTools = [
  inputElicitation,
  inputSampling,
  inputListRoots,
  inputRequestState,
  inputMultiple,
  inputMultiRound,
  inputTampered,
  inputCapabilities,
  missingCapability,
  streamingElicitation,
  loggingTool,
  paramHeader,
  triggerToolChange,
  triggerPromptChange,
];
