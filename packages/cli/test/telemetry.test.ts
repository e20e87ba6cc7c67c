import { redisSpansOn } from '@taskgate/core';
import { describe, expect, it } from 'vitest';
import { startTelemetry, tracingRequested } from '../src/telemetry.js';

describe('when the CLI starts the OpenTelemetry SDK', () => {
  it('only when an exporter is asked for, and not when the SDK is disabled or the exporter is none', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x' })).toBe(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x' })).toBe(false);
  });

  it('starts nothing without one', async () => {
    const logger = { info: () => {}, warn: () => {} } as never;
    expect(await startTelemetry('taskgate-test', { redisSpans: true, logger }, {})).toBeUndefined();
    expect(redisSpansOn()).toBe(false);
  });
});
