import { ClientCapabilityError, definePrompt } from '@taskgate/worker';
import { z } from 'zod';
import { RED_PIXEL_PNG } from './media.js';

// The prompts of the conformance `prompts-*` scenarios and the `completion-complete` scenario.

const CITIES = ['paris', 'park', 'party', 'test', 'testing', 'tester'];

export const simplePrompt = definePrompt({
  name: 'test_simple_prompt',
  description: 'A prompt without arguments.',
  get: () => 'This is a simple prompt for testing.',
});

export const promptWithArguments = definePrompt({
  name: 'test_prompt_with_arguments',
  description: 'A prompt with two required arguments.',
  arguments: z.object({
    arg1: z.string().describe('First test argument'),
    arg2: z.string().describe('Second test argument'),
  }),
  get: ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
  complete: {
    arg1: (value) => CITIES.filter((city) => city.startsWith(value.toLowerCase())),
  },
});

export const promptWithEmbeddedResource = definePrompt({
  name: 'test_prompt_with_embedded_resource',
  description: 'A prompt that embeds the resource it is given.',
  arguments: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }),
  get: ({ resourceUri }) => [
    {
      role: 'user',
      content: {
        type: 'resource',
        resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
      },
    },
    { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
  ],
});

export const promptWithImage = definePrompt({
  name: 'test_prompt_with_image',
  description: 'A prompt holding an image.',
  get: () => [
    { role: 'user', content: { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' } },
    { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
  ],
});

/** Every fixture prompt. */
/**
 * A prompt that asks the user for context first (key `user_context`): revision 2026-07-28 answers
 * `input_required` and renders once the answer comes; a client that cannot answer gets it without context.
 */
export const inputRequiredPrompt = definePrompt({
  name: 'test_input_required_result_prompt',
  description: 'Asks the user for context (key user_context), then renders a prompt with it.',
  async get(_args, ctx) {
    try {
      const answer = await ctx.elicit(
        {
          message: 'What context should the prompt use?',
          requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
        },
        { key: 'user_context' },
      );
      const context = answer.action === 'accept' ? String(answer.content?.context ?? '') : '';
      return `Prompt with context: '${context}'`;
    } catch (error) {
      if (error instanceof ClientCapabilityError) return 'Prompt without context (the client cannot be asked)';
      throw error;
    }
  },
});

export const prompts = [
  simplePrompt,
  promptWithArguments,
  promptWithEmbeddedResource,
  promptWithImage,
  inputRequiredPrompt,
];
