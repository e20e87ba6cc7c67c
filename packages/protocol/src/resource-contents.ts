import { z } from 'zod';
import { Base64Schema } from './base64.js';

const ResourceContentsBaseSchema = z.object({
  uri: z.string(),
  mimeType: z.string().optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});

/** Contents of a resource that can be represented as text. */
export const TextResourceContentsSchema = ResourceContentsBaseSchema.extend({
  text: z.string(),
});
/** Text resource contents. */
export type TextResourceContents = z.infer<typeof TextResourceContentsSchema>;

/** Contents of a binary resource, base64-encoded. */
export const BlobResourceContentsSchema = ResourceContentsBaseSchema.extend({
  blob: Base64Schema,
});
/** Binary resource contents. */
export type BlobResourceContents = z.infer<typeof BlobResourceContentsSchema>;

/** Contents of a resource, text or binary. */
export const ResourceContentsSchema = z.union([TextResourceContentsSchema, BlobResourceContentsSchema]);
/** Contents of a resource. */
export type ResourceContents = z.infer<typeof ResourceContentsSchema>;
