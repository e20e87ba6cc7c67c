import { defineTool } from '@taskgate/worker';
import { z } from 'zod';

// Tools that ask the client for something while they run: sampling and the elicitation forms.

export const sampling = defineTool({
  name: 'test_sampling',
  description: "Asks the client's model to answer the prompt (sampling/createMessage).",
  inputSchema: z.object({ prompt: z.string().describe('The prompt to send to the LLM') }),
  taskSupport: 'optional',
  async handler({ prompt }, ctx) {
    const answer = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
      maxTokens: 100,
    });
    const content = Array.isArray(answer.content) ? answer.content[0] : answer.content;
    const text = content?.type === 'text' ? content.text : JSON.stringify(content);
    return `LLM response: ${text}`;
  },
});

export const elicitation = defineTool({
  name: 'test_elicitation',
  description: 'Asks the user for a username and an email address (elicitation/create).',
  inputSchema: z.object({ message: z.string().describe('The message to show the user') }),
  taskSupport: 'optional',
  async handler({ message }, ctx) {
    const answer = await ctx.elicit({
      message,
      requestedSchema: {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      },
    });
    return `User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
  },
});

export const elicitationDefaults = defineTool({
  name: 'test_elicitation_sep1034_defaults',
  description: 'Asks the user for a form whose fields all carry default values (SEP-1034).',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  async handler(_args, ctx) {
    const answer = await ctx.elicit({
      message: 'Please review your profile (defaults are filled in).',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', title: 'Name', default: 'John Doe' },
          age: { type: 'integer', title: 'Age', default: 30 },
          score: { type: 'number', title: 'Score', default: 95.5 },
          status: { type: 'string', title: 'Status', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', title: 'Verified', default: true },
        },
      },
    });
    return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
  },
});

export const elicitationEnums = defineTool({
  name: 'test_elicitation_sep1330_enums',
  description: 'Asks the user for a form with each kind of enumeration field (SEP-1330).',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  async handler(_args, ctx) {
    const answer = await ctx.elicit({
      message: 'Please choose.',
      requestedSchema: {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          legacyEnum: {
            type: 'string',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
          titledMulti: {
            type: 'array',
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        },
      },
    });
    return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
  },
});

/** The tools that ask the client (sampling, elicitation). */
export const clientTools = [sampling, elicitation, elicitationDefaults, elicitationEnums];
