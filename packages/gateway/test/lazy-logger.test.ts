import type { Logger } from '@taskgate/core';
import { describe, expect, it } from 'vitest';
import { LazyLogger } from '../src/ops/lazy-logger.js';

/** A logger that records its entries and the children made of it, like pino's `child`. */
function recorder(enabled: (level: string) => boolean = () => true) {
  const entries: { level: string; bindings: Record<string, unknown>[]; fields: unknown; message: string }[] = [];
  const children: Record<string, unknown>[][] = [];
  const make = (bindings: Record<string, unknown>[]): Logger & { isLevelEnabled(level: string): boolean } => {
    const log = (level: string) => (fields: Readonly<Record<string, unknown>>, message: string) =>
      entries.push({ level, bindings, fields, message });
    return {
      debug: log('debug'),
      info: log('info'),
      warn: log('warn'),
      error: log('error'),
      child: (more) => {
        const chain = [...bindings, { ...more }];
        children.push(chain);
        return make(chain);
      },
      isLevelEnabled: enabled,
    };
  };
  return { root: make([]), entries, children };
}

describe('LazyLogger', () => {
  it('makes a child logger only when something is logged through it, with every binding in order', () => {
    const { root, entries, children } = recorder();
    const logger = LazyLogger.wrap(root);
    const request = logger.child({ req: 'r1' });
    const rpc = request.child({ rpc: 'tasks/result' });
    expect(children).toEqual([]);

    rpc.info({ taskId: 't' }, 'task result retrieved');
    expect(children).toEqual([[{ req: 'r1' }], [{ req: 'r1' }, { rpc: 'tasks/result' }]]);
    expect(entries).toEqual([
      {
        level: 'info',
        bindings: [{ req: 'r1' }, { rpc: 'tasks/result' }],
        fields: { taskId: 't' },
        message: 'task result retrieved',
      },
    ]);
    // Made once: later entries and the parent's own entries reuse them.
    rpc.warn({}, 'again');
    request.error({}, 'parent');
    expect(children).toHaveLength(2);
    expect(entries.map((entry) => [entry.level, entry.bindings])).toEqual([
      ['info', [{ req: 'r1' }, { rpc: 'tasks/result' }]],
      ['warn', [{ req: 'r1' }, { rpc: 'tasks/result' }]],
      ['error', [{ req: 'r1' }]],
    ]);
    // The root logs as itself.
    logger.debug({ a: 1 }, 'root');
    expect(entries.at(-1)).toEqual({ level: 'debug', bindings: [], fields: { a: 1 }, message: 'root' });
  });

  it('makes no child for an entry its level drops', () => {
    const { root, entries, children } = recorder((level) => level !== 'debug');
    const child = LazyLogger.wrap(root).child({ req: 'r2' });
    child.debug({}, 'dropped');
    expect(children).toEqual([]);
    child.info({}, 'kept');
    expect(children).toEqual([[{ req: 'r2' }]]);
    expect(entries.map((entry) => entry.message)).toEqual(['kept']);
  });
});
