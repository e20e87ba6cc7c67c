import { describe, expect, it } from 'vitest';
import {
  ErrorCode,
  isJsonRpcErrorResponse,
  isJsonRpcNotification,
  isJsonRpcRequest,
  isJsonRpcResultResponse,
  ProtocolError,
  parseJsonRpcMessage,
} from '../src/index.js';

/** Runs `parseJsonRpcMessage` expecting a ProtocolError and returns it. */
function rejection(value: unknown): ProtocolError {
  try {
    parseJsonRpcMessage(value);
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error('parseJsonRpcMessage accepted the value');
}

describe('parseJsonRpcMessage', () => {
  it('returns a request with its params intact, unknown members included', () => {
    const message = parseJsonRpcMessage({
      jsonrpc: '2.0',
      id: 'r-1',
      method: 'tools/call',
      params: { name: 'get_weather', vendor: { x: 1 }, _meta: { progressToken: 7 } },
    });
    expect(isJsonRpcRequest(message)).toBe(true);
    expect(message).toEqual({
      jsonrpc: '2.0',
      id: 'r-1',
      method: 'tools/call',
      params: { name: 'get_weather', vendor: { x: 1 }, _meta: { progressToken: 7 } },
    });
  });

  it('tells the four kinds of message apart', () => {
    const notification = parseJsonRpcMessage({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const result = parseJsonRpcMessage({ jsonrpc: '2.0', id: 1, result: { ok: true } });
    const error = parseJsonRpcMessage({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'bad' } });
    expect([notification, result, error].map(isJsonRpcNotification)).toEqual([true, false, false]);
    expect([notification, result, error].map(isJsonRpcResultResponse)).toEqual([false, true, false]);
    expect([notification, result, error].map(isJsonRpcErrorResponse)).toEqual([false, false, true]);
    expect([notification, result, error].map(isJsonRpcRequest)).toEqual([false, false, false]);
    expect(result).toEqual({ jsonrpc: '2.0', id: 1, result: { ok: true } });
  });

  it('rejects a batch with -32600 saying batches are not supported', () => {
    const error = rejection([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect(error.code).toBe(ErrorCode.InvalidRequest);
    expect(error.message).toMatch(/batches are not supported/);
  });

  it('rejects an empty batch the same way', () => {
    const error = rejection([]);
    expect(error.toJSON()).toEqual({
      code: -32600,
      message: 'Invalid Request: JSON-RPC batches are not supported; send each message on its own',
    });
  });

  it.each([
    ['null', null],
    ['a string', 'ping'],
    ['a number', 42],
    ['a boolean', true],
  ])('rejects %s: a message must be an object', (_label, value) => {
    const error = rejection(value);
    expect(error.code).toBe(-32600);
    expect(error.message).toBe('Invalid Request: a JSON-RPC message must be a JSON object');
  });

  it.each([
    ['missing', { id: 1, method: 'ping' }],
    ['"1.0"', { jsonrpc: '1.0', id: 1, method: 'ping' }],
    ['a number', { jsonrpc: 2, id: 1, method: 'ping' }],
  ])('rejects a jsonrpc member that is %s', (_label, value) => {
    expect(rejection(value).message).toBe('Invalid Request: the "jsonrpc" member must be exactly "2.0"');
  });

  it('rejects an object that is no kind of message', () => {
    expect(rejection({ jsonrpc: '2.0', id: 1 }).message).toMatch(/expected a request .* a notification .* a response/);
  });

  it('names the null id of a request', () => {
    const error = rejection({ jsonrpc: '2.0', id: null, method: 'ping' });
    expect(error.code).toBe(-32600);
    expect(error.message).toBe(
      'Invalid Request: invalid request: id: must be a string or an integer (null is not allowed)',
    );
  });

  it('names an unknown top-level member', () => {
    expect(rejection({ jsonrpc: '2.0', id: 1, method: 'ping', extra: true }).message).toMatch(
      /invalid request: .*"extra"/,
    );
  });

  it('names array params of a notification', () => {
    expect(rejection({ jsonrpc: '2.0', method: 'x', params: [1] }).message).toMatch(/invalid notification: params: /);
  });

  it('rejects a response carrying both result and error', () => {
    const error = rejection({ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } });
    expect(error.message).toBe('Invalid Request: a response carries either "result" or "error", never both');
  });

  it('names the member of a malformed error response', () => {
    const error = rejection({ jsonrpc: '2.0', id: 1, error: { code: 'oops', message: 'x' } });
    expect(error.message).toMatch(/invalid error response: error\.code: /);
  });

  it('rejects a result response without id', () => {
    expect(rejection({ jsonrpc: '2.0', result: {} }).message).toMatch(/invalid response: id: /);
  });
});
