import { z } from 'zod';
import { AnyObjectSchema } from './any-object.js';

// Capability objects are open: peers may announce capabilities newer than this package. The `tasks`
// capability shapes follow CAP-1; presence of a member (usually `{}`) means "supported".

/** `capabilities.tasks` of a server: which task operations and task-augmented requests it supports (CAP-1). */
export const ServerTasksCapabilitySchema = z.looseObject({
  list: AnyObjectSchema.optional(),
  cancel: AnyObjectSchema.optional(),
  requests: z
    .looseObject({
      tools: z.looseObject({ call: AnyObjectSchema.optional() }).optional(),
    })
    .optional(),
});
/** The tasks capability a server declares. */
export type ServerTasksCapability = z.infer<typeof ServerTasksCapabilitySchema>;

/** `capabilities.tasks` of a client: which task operations and task-augmented requests it supports (CAP-1). */
export const ClientTasksCapabilitySchema = z.looseObject({
  list: AnyObjectSchema.optional(),
  cancel: AnyObjectSchema.optional(),
  requests: z
    .looseObject({
      sampling: z.looseObject({ createMessage: AnyObjectSchema.optional() }).optional(),
      elicitation: z.looseObject({ create: AnyObjectSchema.optional() }).optional(),
    })
    .optional(),
});
/** The tasks capability a client declares. */
export type ClientTasksCapability = z.infer<typeof ClientTasksCapabilitySchema>;

/** `capabilities.elicitation` of a client. An empty object means form mode only (older clients send that). */
export const ElicitationCapabilitySchema = z.looseObject({
  form: z.looseObject({ applyDefaults: z.boolean().optional() }).optional(),
  url: AnyObjectSchema.optional(),
});
/** The elicitation capability a client declares. */
export type ElicitationCapability = z.infer<typeof ElicitationCapabilitySchema>;

const ListChangedSchema = z.object({ listChanged: z.boolean().optional() });

/** What a client supports, sent in `initialize`. */
export const ClientCapabilitiesSchema = z.object({
  experimental: z.record(z.string(), AnyObjectSchema).optional(),
  sampling: z.object({ context: AnyObjectSchema.optional(), tools: AnyObjectSchema.optional() }).optional(),
  elicitation: ElicitationCapabilitySchema.optional(),
  roots: ListChangedSchema.optional(),
  tasks: ClientTasksCapabilitySchema.optional(),
  extensions: z.record(z.string(), AnyObjectSchema).optional(),
});
/** What a client supports. */
export type ClientCapabilities = z.infer<typeof ClientCapabilitiesSchema>;

/** What a server supports, returned from `initialize`. */
export const ServerCapabilitiesSchema = z.object({
  experimental: z.record(z.string(), AnyObjectSchema).optional(),
  logging: AnyObjectSchema.optional(),
  completions: AnyObjectSchema.optional(),
  prompts: ListChangedSchema.optional(),
  resources: z.object({ subscribe: z.boolean().optional(), listChanged: z.boolean().optional() }).optional(),
  tools: ListChangedSchema.optional(),
  tasks: ServerTasksCapabilitySchema.optional(),
  extensions: z.record(z.string(), AnyObjectSchema).optional(),
});
/** What a server supports. */
export type ServerCapabilities = z.infer<typeof ServerCapabilitiesSchema>;
