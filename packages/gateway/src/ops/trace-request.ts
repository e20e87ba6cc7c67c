import {
  type Attributes,
  context,
  contextFromCarrier,
  failSpan,
  Keys,
  type Span,
  SpanKind,
  trace,
  tracer,
} from '@taskgate/core';
import type { JsonRpcMessage } from '@taskgate/protocol';
import type { NextFunction, Request, Response } from 'express';

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The span of one request to the MCP endpoint (kind SERVER): a child of the request's W3C `traceparent`
 * (and `tracestate`), or a new root. It is the active span while the request runs, so the task's enqueue
 * span and, through the job, the worker's spans join its trace; it ends when the response is sent (an SSE
 * stream: when the stream ends). Without an OpenTelemetry SDK the span is the API's no-op one.
 */
export function traceMcpRequest(path: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const parent = contextFromCarrier({
      traceparent: header(req, 'traceparent'),
      tracestate: header(req, 'tracestate'),
    });
    const span = tracer().startSpan(
      `${req.method} ${path}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': path } },
      parent,
    );
    if (!span.isRecording()) {
      next();
      return;
    }
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      const status = res.headersSent ? res.statusCode : 499;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) failSpan(span, String(status));
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    context.with(trace.setSpan(parent, span), next);
  };
}

/** The request span of the running request, when something records it. */
function recordingSpan(): Span | undefined {
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span : undefined;
}

/**
 * Names the request span after the JSON-RPC message (`{mcp.method.name} {target}`, the MCP semantic
 * conventions) and describes it: method, request id, the tool or prompt, the task; the session and owner
 * as digests only. Never arguments, tokens or owners in clear.
 */
export function describeMessage(message: JsonRpcMessage): void {
  const span = recordingSpan();
  if (span === undefined) return;
  const attributes: Attributes = {
    'rpc.system': 'jsonrpc',
    'rpc.system.name': 'jsonrpc',
    'jsonrpc.protocol.version': '2.0',
  };
  if (!('method' in message)) {
    // A client's answer to a server-to-client request (elicitation, sampling).
    attributes['jsonrpc.request.id'] = String(message.id);
    span.updateName('response');
    span.setAttributes(attributes);
    return;
  }
  const { method } = message;
  const params = (message.params ?? {}) as { name?: unknown; taskId?: unknown };
  attributes['rpc.method'] = method;
  attributes['mcp.method'] = method;
  attributes['mcp.method.name'] = method;
  if ('id' in message) {
    attributes['jsonrpc.request.id'] = String(message.id);
    attributes['rpc.jsonrpc.request_id'] = String(message.id);
  }
  let target: string | undefined;
  if (method === 'tools/call' && typeof params.name === 'string') {
    target = params.name;
    attributes['mcp.tool'] = target;
    attributes['gen_ai.tool.name'] = target;
    attributes['gen_ai.operation.name'] = 'execute_tool';
  } else if (method === 'prompts/get' && typeof params.name === 'string') {
    target = params.name;
    attributes['gen_ai.prompt.name'] = target;
  }
  if (typeof params.taskId === 'string') attributes['mcp.task.id'] = params.taskId;
  span.updateName(target === undefined ? method : `${method} ${target}`);
  span.setAttributes(attributes);
}

/** Records the request's session and owner, as digests (the session id is a bearer secret). */
export function describeSession(
  session: { readonly sessionId: string; readonly protocolVersion: string },
  owner: string,
): void {
  const span = recordingSpan();
  if (span === undefined) return;
  span.setAttributes({
    'mcp.session.id': Keys.digest(session.sessionId).slice(0, 12),
    'mcp.protocol.version': session.protocolVersion,
    'taskgate.owner': Keys.ownerId(owner),
  });
}

/** Records the task a request created or read (`mcp.task.id`, `mcp.task.status`). */
export function describeReply(
  reply:
    | { readonly kind: 'stream'; readonly task: { readonly taskId: string; readonly status: string } }
    | { readonly kind: 'result'; readonly result: Record<string, unknown> },
): void {
  const span = recordingSpan();
  if (span === undefined) return;
  if (reply.kind === 'stream') {
    span.setAttribute('mcp.task.id', reply.task.taskId);
    span.setAttribute('mcp.task.status', reply.task.status);
    return;
  }
  const result = reply.result as { task?: { taskId?: unknown; status?: unknown }; taskId?: unknown; status?: unknown };
  const task = typeof result.task === 'object' && result.task !== null ? result.task : result;
  if (typeof task.taskId === 'string') span.setAttribute('mcp.task.id', task.taskId);
  if (typeof task.status === 'string') span.setAttribute('mcp.task.status', task.status);
}

/** Marks the request span failed with the JSON-RPC error code (never the message: it may quote input). */
export function describeError(code: number): void {
  const span = recordingSpan();
  if (span === undefined) return;
  span.setAttribute('rpc.response.status_code', String(code));
  span.setAttribute('rpc.jsonrpc.error_code', code);
  failSpan(span, String(code));
}
