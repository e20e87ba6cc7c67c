import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readPlain } from '../src/http/post.js';

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server on 127.0.0.1 whose every request goes to `handle`; resolves with its port. */
async function serve(handle: (req: IncomingMessage) => Promise<unknown>): Promise<number> {
  server = createServer((req, res) => {
    handle(req).then(
      (value) => res.end(JSON.stringify(value)),
      (error: Error) => res.end(JSON.stringify({ error: error.message })),
    );
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** POSTs `body` whole; resolves with the response's text. */
function post(port: number, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      { port, host: '127.0.0.1', method: 'POST', headers: { 'Content-Length': body.length } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve(text));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the plain body reader', () => {
  it('reads the body whole as UTF-8 without a byte-order mark, and leaves no listener behind', async () => {
    const port = await serve(async (req) => {
      const counts = (): number[] => ['data', 'error', 'close'].map((event) => req.listenerCount(event));
      const before = counts();
      // Called from the 'request' event, before the parser reached the body: the reader listens for it.
      const complete = req.complete;
      const reading = readPlain(req);
      // Counted right after the reader's own 'end' listener ran (the request's 'close' comes later).
      const after = await new Promise<number[]>((resolve) => req.once('end', () => resolve(counts())));
      return { text: await reading, before, after, complete };
    });
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"méthode":"ping"}', 'utf8')]);
    const answer = JSON.parse(await post(port, body)) as {
      text: string;
      before: number[];
      after: number[];
      complete: boolean;
    };
    expect(answer.complete).toBe(false);
    expect(answer.text).toBe('{"méthode":"ping"}');
    expect(answer.after).toEqual(answer.before);
  });

  it('rejects when the client goes away before the body is complete, and the server keeps serving', async () => {
    let seen: (outcome: string) => void = () => {};
    const outcome = new Promise<string>((resolve) => {
      seen = resolve;
    });
    const port = await serve((req) =>
      readPlain(req).then(
        (text) => {
          seen(`read ${text.length} characters`);
          return { text };
        },
        (error: Error) => {
          seen(error.message);
          throw error;
        },
      ),
    );
    const cut = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'Content-Length': 100 } });
    cut.on('error', () => {});
    cut.write('{"jsonrpc":');
    cut.flushHeaders();
    setTimeout(() => cut.destroy(), 50);
    // Node's 'aborted' error, or the reader's own 'close' before 'end': either way a rejection, not a body.
    expect(['aborted', 'the request closed before its body was read']).toContain(await outcome);
    const answer = JSON.parse(await post(port, Buffer.from('{}'))) as { text: string };
    expect(answer.text).toBe('{}');
  });
});
