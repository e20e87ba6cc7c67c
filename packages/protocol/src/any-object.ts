import { z } from 'zod';

/**
 * Any non-null object. Used where the spec only asks for "an object" (capability flags such as
 * `tasks.list: {}`, JSON Schema property definitions). Arrays pass on purpose: the reference SDK's check is
 * this loose, and a stricter broker would refuse peers the SDK accepts.
 */
export const AnyObjectSchema = z.custom<object>((value) => typeof value === 'object' && value !== null, {
  error: 'must be an object',
});
