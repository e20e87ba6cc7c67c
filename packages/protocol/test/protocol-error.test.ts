import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ErrorCode,
  type JsonRpcErrorObject,
  JsonRpcErrorObjectSchema,
  ProtocolError,
  toJsonRpcError,
} from '../src/index.js';

describe('ProtocolError', () => {
  it('carries its code, message and data onto the wire', () => {
    const error = new ProtocolError(-32602, 'Failed to retrieve task: Task not found', { taskId: 't-1' });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ProtocolError');
    expect(error.toJSON()).toEqual({
      code: -32602,
      message: 'Failed to retrieve task: Task not found',
      data: { taskId: 't-1' },
    });
    expect(JSON.parse(JSON.stringify(error))).toEqual(error.toJSON());
  });

  it('leaves data out when there is none', () => {
    expect(Object.keys(new ProtocolError(-32600, 'x').toJSON())).toEqual(['code', 'message']);
  });

  it('has a factory per standard code', () => {
    expect(ProtocolError.invalidParams('p').code).toBe(ErrorCode.InvalidParams);
    expect(ProtocolError.methodNotFound('m').code).toBe(ErrorCode.MethodNotFound);
    expect(ProtocolError.invalidRequest('r').code).toBe(ErrorCode.InvalidRequest);
    expect(ProtocolError.internal().toJSON()).toEqual({ code: -32603, message: 'Internal error' });
  });

  it('produces error objects the wire schema accepts', () => {
    const wire = new ProtocolError(-32602, 'bad', [1]).toJSON();
    expect(JsonRpcErrorObjectSchema.parse(wire)).toEqual(wire);
    expectTypeOf<JsonRpcErrorObject>().toEqualTypeOf<{ code: number; message: string; data?: unknown }>();
  });
});

describe('toJsonRpcError', () => {
  it('passes a ProtocolError through unchanged', () => {
    const error = ProtocolError.invalidParams("Cannot cancel task: already in terminal status 'completed'");
    expect(toJsonRpcError(error)).toEqual({
      code: -32602,
      message: "Cannot cancel task: already in terminal status 'completed'",
    });
  });

  it.each([
    ['an Error holding a secret', new Error('connect ECONNREFUSED redis://:hunter2@10.0.0.5:6379')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'taskId')")],
    ['a string', 'boom'],
    ['undefined', undefined],
    ['null', null],
    ['an object that looks like a wire error', { code: -32602, message: 'forged' }],
  ])('turns %s into -32603 without leaking its message', (_label, thrown) => {
    const wire = toJsonRpcError(thrown);
    expect(wire).toEqual({ code: -32603, message: 'Internal error' });
    expect(JSON.stringify(wire)).not.toMatch(/hunter2|taskId|boom|forged/);
  });
});
