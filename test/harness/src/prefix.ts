import { randomBytes } from 'node:crypto';

/** A key prefix no other test uses, so tests can share one Redis server in parallel. */
export function uniquePrefix(label = 't'): string {
  return `${label}${randomBytes(6).toString('hex')}`;
}
