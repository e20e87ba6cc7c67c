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
  it('makes no child logger: each entry goes through the root, its bindings in order before its fields', () => {
    const { root, entries, children } = recorder();
    const logger = LazyLogger.wrap(root);
    const request = logger.child({ req: 'r1', http: 'POST' });
    const rpc = request.child({ rpc: 'tasks/result' });

    rpc.info({ taskId: 't' }, 'task result retrieved');
    rpc.warn({ rpc: 'shadowed', err: 'e' }, 'again');
    request.error({}, 'parent');
    logger.debug({ a: 1 }, 'root');
    expect(children).toEqual([]);
    expect(entries).toEqual([
      {
        level: 'info',
        bindings: [],
        fields: { req: 'r1', http: 'POST', rpc: 'tasks/result', taskId: 't' },
        message: 'task result retrieved',
      },
      // A field named as a binding keeps the binding's place and takes the field's value (JSON's last one wins).
      { level: 'warn', bindings: [], fields: { req: 'r1', http: 'POST', rpc: 'shadowed', err: 'e' }, message: 'again' },
      { level: 'error', bindings: [], fields: { req: 'r1', http: 'POST' }, message: 'parent' },
      { level: 'debug', bindings: [], fields: { a: 1 }, message: 'root' },
    ]);
    expect(Object.keys(entries[0]?.fields as object)).toEqual(['req', 'http', 'rpc', 'taskId']);
  });

  it('writes nothing for an entry its level drops', () => {
    const { root, entries, children } = recorder((level) => level !== 'debug');
    const child = LazyLogger.wrap(root).child({ req: 'r2' });
    child.debug({}, 'dropped');
    child.info({}, 'kept');
    expect(children).toEqual([]);
    expect(entries.map((entry) => [entry.message, entry.fields])).toEqual([['kept', { req: 'r2' }]]);
  });
});
