import { z } from 'zod';

function decodes(value: string): boolean {
  try {
    atob(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * A base64 string as the platform decoder reads it (forgiving-base64: ASCII whitespace and missing padding
 * are tolerated). Decoding with `atob` keeps huge payloads off the regex engine's stack.
 */
export const Base64Schema = z.string().refine(decodes, { error: 'must be a base64-encoded string' });
