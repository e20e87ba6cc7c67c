import { randomBytes, randomFillSync } from 'node:crypto';

/** Random bytes of task ids: one call to the OS CSPRNG per 256 ids (each byte used once), not one per id. */
const ID_BYTES = 18;
const pool = Buffer.alloc(ID_BYTES * 256);
let used = pool.length;

function randomIdPart(): string {
  if (used + ID_BYTES > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const part = pool.toString('base64url', used, used + ID_BYTES);
  used += ID_BYTES;
  return part;
}

/**
 * A new task id: the owner's slot tag (4 characters, see `Keys.slotTag`), then 144 random bits from the OS
 * CSPRNG, base64url (28 characters in all). Never a counter (CRT-6, SEC-2).
 */
export function newTaskId(slotTag: string): string {
  return `${slotTag}${randomIdPart()}`;
}

/** A random slot tag, for a session no principal owns (auth off): such sessions spread over the shards. */
export function randomSlotTag(): string {
  return randomBytes(3).toString('base64url');
}

/** True when a string has the shape of an id from `newTaskId` (cheap rejection of garbage before Redis). */
export function isTaskIdShape(value: string): boolean {
  return /^[A-Za-z0-9_-]{16,64}$/.test(value);
}
