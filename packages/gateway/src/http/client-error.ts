import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ErrorCode } from '@taskgate/protocol';

/** Why Node's HTTP parser refused a request, by its error code: the status and the message of the answer. */
function refusalOf(code: string | undefined): { status: number; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, message: 'Request Header Fields Too Large: the request headers exceed the limit' };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, message: 'Request Timeout: the request did not arrive in time' };
  }
  return { status: 400, message: 'Bad Request: the request is not valid HTTP/1.1' };
}

/**
 * The server's `clientError` handler: a request Node's HTTP parser refuses (malformed framing, headers over
 * the limit, too slow) gets the same kind of answer as every other refusal, a JSON-RPC error with id `null`
 * (-32600: no request could be read) with its status, instead of Node's bare status line; then the connection closes.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const { status, message } = refusalOf(error.code);
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message } });
  // The answer to a HEAD has no body (the client would read one as the next response).
  const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
  );
}
