import { SUPPORTED_PROTOCOL_VERSIONS as SDK_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { isSupportedProtocolVersion, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../src/index.js';

describe('protocol versions', () => {
  it('offers 2025-11-25 first and accepts the three earlier dated revisions', () => {
    expect(LATEST_PROTOCOL_VERSION).toBe('2025-11-25');
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
  });

  it('supports only versions the SDK supports too', () => {
    expect(SUPPORTED_PROTOCOL_VERSIONS.filter((version) => !SDK_VERSIONS.includes(version))).toEqual([]);
  });

  it('recognises supported versions and nothing else', () => {
    expect(SUPPORTED_PROTOCOL_VERSIONS.every(isSupportedProtocolVersion)).toBe(true);
    expect(isSupportedProtocolVersion('2024-10-07')).toBe(false);
    expect(isSupportedProtocolVersion('2026-01-01')).toBe(false);
  });
});
