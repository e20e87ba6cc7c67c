import { ErrorCode } from '@taskgate/protocol';
import { describe, expect, it } from 'vitest';
import { AuthError } from '../src/auth/caller.js';
import { HttpError } from '../src/messages/http-error.js';

describe('HTTP-level refusals', () => {
  it('carry a stable string code beside their status and JSON-RPC code', () => {
    const session = HttpError.sessionNotFound();
    expect({ status: session.status, rpcCode: session.rpcCode, code: session.code }).toEqual({
      status: 404,
      rpcCode: ErrorCode.SessionNotFound,
      code: 'SESSION_NOT_FOUND',
    });
    expect(HttpError.badRequest('Bad Request: no').code).toBe('BAD_REQUEST');
    expect(new HttpError(413, ErrorCode.InvalidRequest, 'Payload Too Large').code).toBe('PAYLOAD_TOO_LARGE');
    expect(new HttpError(503, ErrorCode.InternalError, 'Service Unavailable').code).toBe('UNAVAILABLE');
    expect(new HttpError(418, ErrorCode.InvalidRequest, 'teapot').code).toBe('HTTP_REFUSED');
  });

  it('name the authentication failure in the code of an AuthError', () => {
    expect(new AuthError('missing_token', 'Unauthorized', 'Bearer').code).toBe('MISSING_TOKEN');
    const scope = new AuthError('insufficient_scope', 'Forbidden', 'Bearer');
    expect({ status: scope.status, code: scope.code }).toEqual({ status: 403, code: 'INSUFFICIENT_SCOPE' });
  });
});
