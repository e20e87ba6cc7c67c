import { z } from 'zod';
import { Base64Schema } from './base64.js';
import { IconSchema } from './implementation.js';
import { ResourceContentsSchema } from './resource-contents.js';

/** The sender or intended reader of a message or content. */
export const RoleSchema = z.enum(['user', 'assistant']);
/** A conversation role. */
export type Role = z.infer<typeof RoleSchema>;

/** Hints about who a content block is for and how much it matters. */
export const AnnotationsSchema = z.object({
  audience: z.array(RoleSchema).optional(),
  /** 0 (least important) to 1 (most important). */
  priority: z.number().min(0).max(1).optional(),
  /** ISO 8601 date-time; a UTC offset is allowed. */
  lastModified: z.iso.datetime({ offset: true }).optional(),
});
/** Annotations on a content block. */
export type Annotations = z.infer<typeof AnnotationsSchema>;

const ContentMetaSchema = z.record(z.string(), z.unknown());

/** Plain text. */
export const TextContentSchema = z.object({
  type: z.literal('text'),
  text: z.string(),
  annotations: AnnotationsSchema.optional(),
  _meta: ContentMetaSchema.optional(),
});
/** Text content. */
export type TextContent = z.infer<typeof TextContentSchema>;

/** An image, base64-encoded. */
export const ImageContentSchema = z.object({
  type: z.literal('image'),
  data: Base64Schema,
  mimeType: z.string(),
  annotations: AnnotationsSchema.optional(),
  _meta: ContentMetaSchema.optional(),
});
/** Image content. */
export type ImageContent = z.infer<typeof ImageContentSchema>;

/** An audio clip, base64-encoded. */
export const AudioContentSchema = z.object({
  type: z.literal('audio'),
  data: Base64Schema,
  mimeType: z.string(),
  annotations: AnnotationsSchema.optional(),
  _meta: ContentMetaSchema.optional(),
});
/** Audio content. */
export type AudioContent = z.infer<typeof AudioContentSchema>;

/** A pointer to a resource the client may read; it need not appear in `resources/list`. */
export const ResourceLinkSchema = z.object({
  type: z.literal('resource_link'),
  uri: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  /** Raw size in bytes, before any encoding. */
  size: z.number().optional(),
  icons: z.array(IconSchema).optional(),
  annotations: AnnotationsSchema.optional(),
  _meta: z.looseObject({}).optional(),
});
/** A resource link. */
export type ResourceLink = z.infer<typeof ResourceLinkSchema>;

/** A resource whose contents travel inline. */
export const EmbeddedResourceSchema = z.object({
  type: z.literal('resource'),
  resource: ResourceContentsSchema,
  annotations: AnnotationsSchema.optional(),
  _meta: ContentMetaSchema.optional(),
});
/** An embedded resource. */
export type EmbeddedResource = z.infer<typeof EmbeddedResourceSchema>;

/** Any content block a tool result may hold. */
export const ContentBlockSchema = z.discriminatedUnion('type', [
  TextContentSchema,
  ImageContentSchema,
  AudioContentSchema,
  ResourceLinkSchema,
  EmbeddedResourceSchema,
]);
/** A content block. */
export type ContentBlock = z.infer<typeof ContentBlockSchema>;
