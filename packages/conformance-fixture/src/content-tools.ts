import { defineTool } from '@taskgate/worker';
import { z } from 'zod';
import { pause, RED_PIXEL_PNG, toneWav } from './media.js';

// Tools whose results exercise the content types, logging, progress and errors (conformance `tools-*`).
// All may be called plainly or as tasks.

const none = z.object({});

export const simpleText = defineTool({
  name: 'test_simple_text',
  description: 'Returns a simple text response.',
  inputSchema: none,
  taskSupport: 'optional',
  handler: () => 'This is a simple text response for testing.',
});

export const imageContent = defineTool({
  name: 'test_image_content',
  description: 'Returns a 1x1 red PNG image.',
  inputSchema: none,
  taskSupport: 'optional',
  handler: () => ({ content: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }] }),
});

export const audioContent = defineTool({
  name: 'test_audio_content',
  description: 'Returns a short WAV tone.',
  inputSchema: none,
  taskSupport: 'optional',
  handler: () => ({ content: [{ type: 'audio', data: toneWav(), mimeType: 'audio/wav' }] }),
});

export const embeddedResource = defineTool({
  name: 'test_embedded_resource',
  description: 'Returns an embedded text resource.',
  inputSchema: none,
  taskSupport: 'optional',
  handler: () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }),
});

export const multipleContentTypes = defineTool({
  name: 'test_multiple_content_types',
  description: 'Returns text, an image and an embedded resource in one result.',
  inputSchema: none,
  taskSupport: 'optional',
  handler: () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        },
      },
    ],
  }),
});

export const toolWithLogging = defineTool({
  name: 'test_tool_with_logging',
  description: 'Sends three info log messages while it runs, 50 ms apart.',
  inputSchema: none,
  taskSupport: 'optional',
  async handler(_args, ctx) {
    await ctx.log('info', 'Tool execution started');
    await pause(50, ctx.signal);
    await ctx.log('info', 'Tool processing data');
    await pause(50, ctx.signal);
    await ctx.log('info', 'Tool execution completed');
    return 'Logging test completed: three log messages were sent.';
  },
});

export const toolWithProgress = defineTool({
  name: 'test_tool_with_progress',
  description: 'Reports progress 0, 50 and 100 of 100, 50 ms apart.',
  inputSchema: none,
  taskSupport: 'optional',
  async handler(_args, ctx) {
    await ctx.progress(0, 100);
    await pause(50, ctx.signal);
    await ctx.progress(50, 100);
    await pause(50, ctx.signal);
    await ctx.progress(100, 100);
    return 'Progress test completed.';
  },
});

export const errorHandling = defineTool({
  name: 'test_error_handling',
  description: 'Always fails: the result has isError true.',
  inputSchema: none,
  taskSupport: 'optional',
  handler: () => {
    throw new Error('This tool intentionally returns an error for testing');
  },
});

export const reconnection = defineTool({
  name: 'test_reconnection',
  description: 'Runs for a moment, long enough for a client to drop and resume the stream of the call.',
  inputSchema: none,
  taskSupport: 'optional',
  async handler(_args, ctx) {
    await pause(300, ctx.signal);
    return 'Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.';
  },
});

export const jsonSchema202012 = defineTool({
  name: 'json_schema_2020_12_tool',
  description: 'Tool with JSON Schema 2020-12 features',
  inputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: {
      address: {
        $anchor: 'addressDef',
        type: 'object',
        properties: { street: { type: 'string' }, city: { type: 'string' } },
      },
    },
    properties: {
      name: { type: 'string' },
      address: { $ref: '#/$defs/address' },
      contactMethod: { type: 'string', enum: ['phone', 'email'] },
      phone: { type: 'string' },
      email: { type: 'string' },
    },
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
    // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword the suite checks (if/then/else)
    then: { required: ['phone'] },
    else: { required: ['email'] },
    additionalProperties: false,
  },
  taskSupport: 'optional',
  handler: (args) => `Received ${JSON.stringify(args)}`,
});

/** The content, logging, progress, error and schema tools. */
export const contentTools = [
  simpleText,
  imageContent,
  audioContent,
  embeddedResource,
  multipleContentTypes,
  toolWithLogging,
  toolWithProgress,
  errorHandling,
  reconnection,
  jsonSchema202012,
];
