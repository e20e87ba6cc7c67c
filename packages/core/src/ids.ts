import { randomBytes } from 'node:crypto';

/** A new task id: 144 random bits from the OS CSPRNG, base64url (24 characters). Never a counter (CRT-6, SEC-2). */
export function newTaskId(): string {
  return randomBytes(18).toString('base64url');
}

/** True when a string has the shape of an id from `newTaskId` (cheap rejection of garbage before Redis). */
export function isTaskIdShape(value: string): boolean {
  return /^[A-Za-z0-9_-]{16,64}$/.test(value);
}
