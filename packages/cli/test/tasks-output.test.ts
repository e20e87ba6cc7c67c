import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { progressBar, table } from '../src/tasks-output.js';

/** A stream that says whether it is a terminal, collecting what is written to it. */
function stream(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const sink = new PassThrough();
  let text = '';
  sink.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  Object.assign(sink, { isTTY });
  return { stream: sink as unknown as NodeJS.WriteStream, text: () => text };
}

describe('taskgate tasks output', () => {
  it('draws a purge progress bar on a terminal, over one line, and ends it', async () => {
    const tty = stream(true);
    const bar = progressBar(tty.stream);
    bar.update({ scanned: 0, purged: 0, total: 4 });
    bar.update({ scanned: 2, purged: 1, total: 4 });
    bar.update({ scanned: 4, purged: 3, total: 4 });
    bar.done();
    await new Promise((resolve) => setImmediate(resolve));
    expect(tty.text().split('\r').slice(1)).toEqual([
      `purging [${'.'.repeat(30)}] 0% 0/4 scanned, 0 purged`,
      `purging [${'#'.repeat(15)}${'.'.repeat(15)}] 50% 2/4 scanned, 1 purged`,
      `purging [${'#'.repeat(30)}] 100% 4/4 scanned, 3 purged\n`,
    ]);
  });

  it('draws nothing when stderr is not a terminal (scripts, logs)', async () => {
    const pipe = stream(false);
    const bar = progressBar(pipe.stream);
    bar.update({ scanned: 2, purged: 1, total: 4 });
    bar.done();
    await new Promise((resolve) => setImmediate(resolve));
    expect(pipe.text()).toBe('');
  });

  it('aligns table columns under their headers', () => {
    expect(
      table(
        ['A', 'LONGER', 'C'],
        [
          ['xyz', 'b', 'last column'],
          ['1', '22', ''],
        ],
      ),
    ).toBe(['A    LONGER  C', 'xyz  b       last column', '1    22'].join('\n'));
  });
});
