import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type CallToolRequestParams,
  ClientNotificationSchemas,
  type ClientRequestParams,
  ClientRequestSchema,
  ClientRequestSchemas,
  clientRequestParamsSchema,
  ErrorCode,
  isClientRequestMethod,
  type PaginatedRequestParams,
  ProtocolError,
  parseClientRequestParams,
} from '../src/index.js';

function thrown(run: () => unknown): ProtocolError {
  try {
    run();
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error('expected a ProtocolError');
}

describe('client request methods', () => {
  it('covers exactly the requests the broker answers', () => {
    expect(Object.keys(ClientRequestSchemas).sort()).toEqual([
      'completion/complete',
      'initialize',
      'logging/setLevel',
      'ping',
      'prompts/get',
      'prompts/list',
      'resources/list',
      'resources/read',
      'resources/subscribe',
      'resources/templates/list',
      'resources/unsubscribe',
      'tasks/cancel',
      'tasks/get',
      'tasks/list',
      'tasks/result',
      'tools/call',
      'tools/list',
    ]);
    for (const [method, schema] of Object.entries(ClientRequestSchemas)) {
      expect(schema.shape.method.value).toBe(method);
    }
  });

  it('covers the notifications the broker accepts', () => {
    for (const [method, schema] of Object.entries(ClientNotificationSchemas)) {
      expect(schema.shape.method.value).toBe(method);
    }
    expect(Object.keys(ClientNotificationSchemas)).toContain('notifications/initialized');
  });

  it('knows which methods it answers', () => {
    expect(isClientRequestMethod('tasks/get')).toBe(true);
    expect(isClientRequestMethod('resources/list')).toBe(true);
    expect(isClientRequestMethod('roots/list')).toBe(false);
    expect(isClientRequestMethod('toString')).toBe(false);
    expect(clientRequestParamsSchema('sampling/createMessage')).toBeUndefined();
  });

  it.each(['ping', 'tools/list', 'tasks/list', 'resources/list', 'resources/templates/list', 'prompts/list'] as const)(
    'lets %s omit its params',
    (method) => {
      expect(clientRequestParamsSchema(method).safeParse(undefined).success).toBe(true);
    },
  );

  it.each([
    'initialize',
    'logging/setLevel',
    'tools/call',
    'tasks/get',
    'tasks/result',
    'tasks/cancel',
    'resources/read',
    'resources/subscribe',
    'resources/unsubscribe',
    'prompts/get',
    'completion/complete',
  ] as const)('requires params for %s', (method) => {
    expect(clientRequestParamsSchema(method).safeParse(undefined).success).toBe(false);
  });

  it('parses a whole request by its method', () => {
    const parsed = ClientRequestSchema.parse({ method: 'tasks/get', params: { taskId: 't-1' } });
    expect(parsed).toEqual({ method: 'tasks/get', params: { taskId: 't-1' } });
    expect(ClientRequestSchema.safeParse({ method: 'sampling/createMessage', params: {} }).success).toBe(false);
  });
});

describe('parseClientRequestParams', () => {
  it('[CRT-1] returns typed params of a task-augmented tools/call', () => {
    const params = parseClientRequestParams('tools/call', {
      name: 'get_weather',
      arguments: { city: 'New York' },
      task: { ttl: 60000 },
    });
    expectTypeOf(params).toEqualTypeOf<CallToolRequestParams>();
    expectTypeOf<ClientRequestParams<'tasks/list'>>().toEqualTypeOf<PaginatedRequestParams | undefined>();
    expect(params.task?.ttl).toBe(60000);
  });

  it('[ERR-1] answers -32602 naming the member when tasks/get has a non-string taskId', () => {
    const error = thrown(() => parseClientRequestParams('tasks/get', { taskId: 42 }));
    expect(error.code).toBe(ErrorCode.InvalidParams);
    expect(error.message).toMatch(/^Invalid params for tasks\/get: params\.taskId: /);
  });

  it('[ERR-1] answers -32602 for a numeric tasks/list cursor', () => {
    const error = thrown(() => parseClientRequestParams('tasks/list', { cursor: 3 }));
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/params\.cursor/);
  });

  it('answers -32602 for a task ttl that is not a number', () => {
    const error = thrown(() => parseClientRequestParams('tools/call', { name: 'x', task: { ttl: 'soon' } }));
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/params\.task\.ttl/);
  });

  it('answers -32602 for missing required params', () => {
    const error = thrown(() => parseClientRequestParams('tasks/cancel', undefined));
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/^Invalid params for tasks\/cancel: params: /);
  });

  it('answers -32602 naming the member when completion/complete has an unknown ref type', () => {
    const error = thrown(() =>
      parseClientRequestParams('completion/complete', { ref: { type: 'ref/tool', name: 'x' }, argument: {} }),
    );
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/params\.ref/);
  });

  it('answers -32602 for prompt arguments that are not strings', () => {
    const error = thrown(() => parseClientRequestParams('prompts/get', { name: 'p', arguments: { n: 3 } }));
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/params\.arguments\.n/);
  });

  it('answers -32601 for a method the broker does not answer', () => {
    const error = thrown(() => parseClientRequestParams('roots/list', {}));
    expect(error.toJSON()).toEqual({ code: -32601, message: 'Method not found: roots/list' });
  });
});
