import { z } from 'zod';
import { AnnotationsSchema, ResourceLinkSchema } from './content.js';
import { IconSchema } from './implementation.js';
import { BaseNotificationParamsSchema, BaseRequestParamsSchema, ResultSchema } from './message-base.js';
import { PaginatedRequestParamsSchema, PaginatedResultSchema } from './pagination.js';
import { BlobResourceContentsSchema, TextResourceContentsSchema } from './resource-contents.js';

// Resources (server feature): what `resources/list`, `resources/templates/list`, `resources/read`,
// `resources/subscribe` and `resources/unsubscribe` carry, and the two notifications about resources.

/** A resource the server can read, as `resources/list` describes it: a resource link without its `type`. */
export const ResourceSchema = ResourceLinkSchema.omit({ type: true });
/** A resource description. */
export type Resource = z.infer<typeof ResourceSchema>;

/** A family of resources named by an RFC 6570 URI template, as `resources/templates/list` describes it. */
export const ResourceTemplateSchema = z.object({
  uriTemplate: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  /** Only when every resource of the template has this type. */
  mimeType: z.string().optional(),
  icons: z.array(IconSchema).optional(),
  annotations: AnnotationsSchema.optional(),
  _meta: z.looseObject({}).optional(),
});
/** A resource template description. */
export type ResourceTemplate = z.infer<typeof ResourceTemplateSchema>;

/** Client to server: list the resources, a page at a time. */
export const ListResourcesRequestSchema = z.object({
  method: z.literal('resources/list'),
  params: PaginatedRequestParamsSchema.optional(),
});
/** A `resources/list` request. */
export type ListResourcesRequest = z.infer<typeof ListResourcesRequestSchema>;

/** One page of resources. */
export const ListResourcesResultSchema = PaginatedResultSchema.extend({
  resources: z.array(ResourceSchema),
});
/** The result of `resources/list`. */
export type ListResourcesResult = z.infer<typeof ListResourcesResultSchema>;

/** Client to server: list the resource templates, a page at a time. */
export const ListResourceTemplatesRequestSchema = z.object({
  method: z.literal('resources/templates/list'),
  params: PaginatedRequestParamsSchema.optional(),
});
/** A `resources/templates/list` request. */
export type ListResourceTemplatesRequest = z.infer<typeof ListResourceTemplatesRequestSchema>;

/** One page of resource templates. */
export const ListResourceTemplatesResultSchema = PaginatedResultSchema.extend({
  resourceTemplates: z.array(ResourceTemplateSchema),
});
/** The result of `resources/templates/list`. */
export type ListResourceTemplatesResult = z.infer<typeof ListResourceTemplatesResultSchema>;

/** Params naming one resource: those of `resources/read`, `resources/subscribe` and `resources/unsubscribe`. */
export const ResourceRequestParamsSchema = BaseRequestParamsSchema.extend({
  /** Any scheme; the server decides how to interpret it. */
  uri: z.string(),
});
/** Params naming one resource. */
export type ResourceRequestParams = z.infer<typeof ResourceRequestParamsSchema>;

/** Client to server: read one resource (a listed one, or one a template describes). */
export const ReadResourceRequestSchema = z.object({
  method: z.literal('resources/read'),
  params: ResourceRequestParamsSchema,
});
/** A `resources/read` request. */
export type ReadResourceRequest = z.infer<typeof ReadResourceRequestSchema>;

/** What `resources/read` returns: the resource's contents (more than one for a resource with parts). */
export const ReadResourceResultSchema = ResultSchema.extend({
  contents: z.array(z.union([TextResourceContentsSchema, BlobResourceContentsSchema])),
});
/** The result of `resources/read`. */
export type ReadResourceResult = z.infer<typeof ReadResourceResultSchema>;

/** Client to server: send `notifications/resources/updated` when this resource changes. */
export const SubscribeRequestSchema = z.object({
  method: z.literal('resources/subscribe'),
  params: ResourceRequestParamsSchema,
});
/** A `resources/subscribe` request. */
export type SubscribeRequest = z.infer<typeof SubscribeRequestSchema>;

/** Client to server: stop the notifications `resources/subscribe` asked for. */
export const UnsubscribeRequestSchema = z.object({
  method: z.literal('resources/unsubscribe'),
  params: ResourceRequestParamsSchema,
});
/** A `resources/unsubscribe` request. */
export type UnsubscribeRequest = z.infer<typeof UnsubscribeRequestSchema>;

/** Params of `notifications/resources/updated`: the resource that changed. */
export const ResourceUpdatedNotificationParamsSchema = BaseNotificationParamsSchema.extend({
  uri: z.string(),
});
/** Params of `notifications/resources/updated`. */
export type ResourceUpdatedNotificationParams = z.infer<typeof ResourceUpdatedNotificationParamsSchema>;

/** Server to client: a subscribed resource changed and may be read again. */
export const ResourceUpdatedNotificationSchema = z.object({
  method: z.literal('notifications/resources/updated'),
  params: ResourceUpdatedNotificationParamsSchema,
});
/** A `notifications/resources/updated` notification. */
export type ResourceUpdatedNotification = z.infer<typeof ResourceUpdatedNotificationSchema>;

/** Server to client: the list of resources (or templates) changed. */
export const ResourceListChangedNotificationSchema = z.object({
  method: z.literal('notifications/resources/list_changed'),
  params: BaseNotificationParamsSchema.optional(),
});
/** A `notifications/resources/list_changed` notification. */
export type ResourceListChangedNotification = z.infer<typeof ResourceListChangedNotificationSchema>;
