import { describe, expect, it } from 'vitest';
import { prompts, resources, tools } from '../src/index.js';
import { RED_PIXEL_PNG, toneWav } from '../src/media.js';

describe('conformance fixture', () => {
  it('offers exactly what the suite (0.1.16) names', () => {
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'json_schema_2020_12_tool',
      'test_audio_content',
      'test_elicitation',
      'test_elicitation_sep1034_defaults',
      'test_elicitation_sep1330_enums',
      'test_embedded_resource',
      'test_error_handling',
      'test_image_content',
      'test_multiple_content_types',
      'test_reconnection',
      'test_sampling',
      'test_simple_text',
      'test_tool_with_logging',
      'test_tool_with_progress',
    ]);
    expect(resources.map((r) => (r.kind === 'resource' ? r.resource.uri : r.template.uriTemplate))).toEqual([
      'test://static-text',
      'test://static-binary',
      'test://watched-resource',
      'test://template/{id}/data',
    ]);
    expect(prompts.map((p) => p.prompt.name)).toEqual([
      'test_simple_prompt',
      'test_prompt_with_arguments',
      'test_prompt_with_embedded_resource',
      'test_prompt_with_image',
    ]);
  });

  it('keeps the JSON Schema 2020-12 keywords the suite checks', () => {
    const tool = tools.find((t) => t.name === 'json_schema_2020_12_tool');
    expect(tool?.inputJsonSchema).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $defs: { address: { type: 'object' } },
      additionalProperties: false,
    });
  });

  it('carries a real PNG and a real WAV', () => {
    const png = Buffer.from(RED_PIXEL_PNG, 'base64');
    expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
    expect(png.readUInt32BE(16)).toBe(1); // width
    const wav = Buffer.from(toneWav(50), 'base64');
    expect(wav.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(wav.subarray(8, 12).toString('ascii')).toBe('WAVE');
    expect(wav.readUInt32LE(40)).toBe(800); // 400 samples of 16 bits at 8 kHz
    expect(wav.length).toBe(44 + 800);
  });
});
