import { describe, expect, it } from 'vitest';
import { prompts, resources, tools } from '../src/index.js';
import { RED_PIXEL_PNG, toneWav } from '../src/media.js';

describe('conformance fixture', () => {
  it('offers exactly what the suites (0.1.16 and 0.2.0-alpha.12) name', () => {
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'confirm_delete',
      'failing_job',
      'greet',
      'json_schema_2020_12_tool',
      'multi_input',
      'protocol_error_job',
      'slow_compute',
      'test_audio_content',
      'test_elicitation',
      'test_elicitation_sep1034_defaults',
      'test_elicitation_sep1330_enums',
      'test_embedded_resource',
      'test_error_handling',
      'test_image_content',
      'test_input_required_result_capabilities',
      'test_input_required_result_elicitation',
      'test_input_required_result_list_roots',
      'test_input_required_result_multi_round',
      'test_input_required_result_multiple_inputs',
      'test_input_required_result_request_state',
      'test_input_required_result_sampling',
      'test_input_required_result_tampered_state',
      'test_logging_tool',
      'test_missing_capability',
      'test_multiple_content_types',
      'test_param_header',
      'test_reconnection',
      'test_sampling',
      'test_simple_text',
      'test_streaming_elicitation',
      'test_tool_with_logging',
      'test_tool_with_progress',
      'test_tool_with_task',
      'test_trigger_prompt_change',
      'test_trigger_tool_change',
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
      'test_input_required_result_prompt',
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
