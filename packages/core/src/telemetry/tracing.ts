import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { BullMQOtel } from 'bullmq-otel';

export { type Attributes, type Context, context, type Span, SpanKind, SpanStatusCode, trace };

/** The instrumentation scope of every taskgate span. */
export const TRACER_NAME = 'taskgate';

/**
 * A task's trace context as it travels in its job data: the W3C `traceparent` and `tracestate` of the span
 * that enqueued it, nothing else (no baggage). Present only while tracing is on.
 */
export interface TraceCarrier {
  readonly traceparent: string;
  readonly tracestate?: string;
}

interface TracingSettings {
  /** Spans for every Lua script taskgate runs, and BullMQ's own spans (bullmq-otel): a debugging aid. */
  redisSpans: boolean;
}

const settings: TracingSettings = { redisSpans: false };

/**
 * Process-wide tracing settings, set once by whoever starts the OpenTelemetry SDK (the CLI). Without an SDK
 * every span is the API's no-op span, and nothing here costs more than a function call.
 */
export function configureTracing(options: Partial<TracingSettings>): void {
  if (options.redisSpans !== undefined) settings.redisSpans = options.redisSpans;
}

let cachedTracer: Tracer | undefined;

/**
 * taskgate's tracer: the API's proxy, which follows the provider an SDK registers (also one registered after
 * the first call) and is the no-op tracer until then. Kept: asking the API for it allocates.
 */
export function tracer(): Tracer {
  cachedTracer ??= trace.getTracer(TRACER_NAME);
  return cachedTracer;
}

/** The trace context of `ctx` (the active one by default) to put in a job, or undefined when nothing traces. */
export function traceCarrierOf(ctx: Context = context.active()): TraceCarrier | undefined {
  const span = trace.getSpan(ctx);
  if (span === undefined || !span.isRecording()) return undefined;
  const fields: Record<string, string> = {};
  propagation.inject(ctx, fields);
  const { traceparent, tracestate } = fields;
  if (typeof traceparent !== 'string') return undefined;
  return typeof tracestate === 'string' && tracestate !== '' ? { traceparent, tracestate } : { traceparent };
}

/** The context a carrier names (from job data or request headers), or the root context without one. */
export function contextFromCarrier(carrier: unknown): Context {
  if (typeof carrier !== 'object' || carrier === null) return ROOT_CONTEXT;
  const { traceparent, tracestate } = carrier as Record<string, unknown>;
  if (typeof traceparent !== 'string') return ROOT_CONTEXT;
  const fields: Record<string, string> = { traceparent };
  if (typeof tracestate === 'string') fields.tracestate = tracestate;
  return propagation.extract(ROOT_CONTEXT, fields);
}

/** Ends `span` with an error status and the error's type; the message is recorded, never tool arguments. */
export function failSpan(span: Span, type: string, message?: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message !== undefined && { message }) });
}

/**
 * Runs `work` inside a span that ends when it settles (an error status when it throws). The span is the
 * active one meanwhile, so the spans `work` starts are its children.
 */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes !== undefined && { attributes: options.attributes }),
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    if (span.isRecording()) failSpan(span, error instanceof Error ? error.constructor.name : 'Error');
    throw error;
  } finally {
    span.end();
  }
}

/** Whether Redis script spans are on (and a tracer records anything at all). */
export function redisSpansOn(): boolean {
  return settings.redisSpans;
}

let bullmqTelemetry: BullMQOtel | undefined;

/** BullMQ's telemetry hook for queues and workers, only with Redis spans on (see `configureTracing`). */
export function bullmqTelemetryOption(): { telemetry: BullMQOtel } | Record<string, never> {
  if (!settings.redisSpans) return {};
  bullmqTelemetry ??= new BullMQOtel({ tracerName: TRACER_NAME });
  return { telemetry: bullmqTelemetry };
}
