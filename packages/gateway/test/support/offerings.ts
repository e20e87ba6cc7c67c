import { ErrorCode, ProtocolError } from '@taskgate/protocol';
import { definePrompt, defineResource, defineResourceTemplate } from '@taskgate/worker';
import { z } from 'zod';

/** Resources, templates and prompts of the gateway tests. */

export const notes = defineResource({
  uri: 'test://notes',
  name: 'notes',
  title: 'Notes',
  description: 'Plain text',
  mimeType: 'text/plain',
  read: () => 'first note',
});

export const pixel = defineResource({
  uri: 'test://pixel',
  name: 'pixel',
  mimeType: 'image/png',
  read: () => new Uint8Array([0x89, 0x50, 0x4e, 0x47]),
});

export const parts = defineResource({
  uri: 'test://parts',
  name: 'parts',
  read: () => [{ text: 'part one' }, { uri: 'test://parts#2', mimeType: 'text/markdown', text: '# two' }],
});

export const broken = defineResource({
  uri: 'test://broken',
  name: 'broken',
  read: () => {
    throw new Error('the disk is on fire');
  },
});

export const forbidden = defineResource({
  uri: 'test://forbidden',
  name: 'forbidden',
  read: () => {
    throw new ProtocolError(ErrorCode.InvalidParams, 'You may not read this resource', { reason: 'policy' });
  },
});

export const items = defineResourceTemplate({
  uriTemplate: 'test://items/{id}',
  name: 'item',
  mimeType: 'application/json',
  read: ({ id }, ctx) => JSON.stringify({ id, uri: ctx.uri }),
  complete: {
    id: (value) => Array.from({ length: 150 }, (_, i) => String(i)).filter((id) => id.startsWith(value)),
  },
});

export const greeting = definePrompt({
  name: 'greeting',
  title: 'Greeting',
  description: 'Greets someone',
  arguments: z.object({
    name: z.string().describe('Whom to greet'),
    tone: z.enum(['warm', 'formal']).optional().describe('How'),
  }),
  get: ({ name, tone }) => (tone === 'formal' ? `Good day, ${name}.` : `Hello, ${name}!`),
  complete: {
    name: (value, ctx) =>
      ['Ada', 'Alan', 'Grace'].filter(
        (n) => n.toLowerCase().startsWith(value.toLowerCase()) && ctx.arguments.tone !== 'none',
      ),
  },
});

export const conversation = definePrompt({
  name: 'conversation',
  get: () => ({
    description: 'Two turns',
    messages: [
      { role: 'user', content: { type: 'text', text: 'Hi' } },
      { role: 'assistant', content: { type: 'text', text: 'Hello' } },
    ],
  }),
});

export const TEST_RESOURCES = [notes, pixel, parts, broken, forbidden, items];
export const TEST_PROMPTS = [greeting, conversation];
