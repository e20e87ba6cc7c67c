import { configureTracing, type Logger } from '@taskgate/core';

/** A started OpenTelemetry SDK; `shutdown` exports what is still buffered. */
export interface Telemetry {
  shutdown(): Promise<void>;
}

type Env = Readonly<Record<string, string | undefined>>;

function set(env: Env, name: string): boolean {
  const value = env[name];
  return value !== undefined && value.trim() !== '';
}

/**
 * Tracing is on only when the environment asks for an exporter (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_TRACES_EXPORTER`), and not with `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`.
 */
export function tracingRequested(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim() === 'none') return false;
  return (
    set(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') ||
    set(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ||
    set(env, 'OTEL_TRACES_EXPORTER')
  );
}

/**
 * Starts the OpenTelemetry Node SDK for one process when tracing is requested (see `tracingRequested`),
 * configured by the standard `OTEL_*` variables (exporter, protocol, endpoint, headers, sampler, batch
 * processor, propagators, resource attributes); returns undefined, and loads nothing, otherwise — every
 * span is then the API's no-op span. Traces only: no metrics or logs exporter (Prometheus and the JSON logs
 * cover those), no auto-instrumentation, and no process resource detector (it would record the command
 * line, whose flags may carry secrets). `redisSpans` adds a span per Lua script and BullMQ's own spans.
 */
export async function startTelemetry(
  serviceName: string,
  options: { readonly redisSpans: boolean; readonly logger: Logger },
  env: Env = process.env,
): Promise<Telemetry | undefined> {
  if (!tracingRequested(env)) return undefined;
  const [{ NodeSDK }, { envDetector, hostDetector }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/resources'),
  ]);
  const sdk = new NodeSDK({
    ...(!set(env, 'OTEL_SERVICE_NAME') && { serviceName }),
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
    resourceDetectors: [envDetector, hostDetector],
  });
  sdk.start();
  configureTracing({ redisSpans: options.redisSpans });
  options.logger.info(
    { exporter: env.OTEL_TRACES_EXPORTER ?? 'otlp', redisSpans: options.redisSpans },
    'OpenTelemetry tracing on',
  );
  return {
    shutdown: async () => {
      await sdk.shutdown().catch((error: unknown) => {
        options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'trace export failed');
      });
    },
  };
}
