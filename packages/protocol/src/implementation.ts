import { z } from 'zod';

/** An icon a client may show for a tool or an implementation. */
export const IconSchema = z.object({
  /** URL or `data:` URI. */
  src: z.string(),
  mimeType: z.string().optional(),
  /** `WxH` strings such as `48x48`, or `any` for scalable formats. */
  sizes: z.array(z.string()).optional(),
  /** The background the icon is drawn for. */
  theme: z.enum(['light', 'dark']).optional(),
});
/** An icon for a tool or an implementation. */
export type Icon = z.infer<typeof IconSchema>;

/** Name and version of an MCP client or server (`clientInfo`, `serverInfo`). */
export const ImplementationSchema = z.object({
  name: z.string(),
  title: z.string().optional(),
  version: z.string(),
  icons: z.array(IconSchema).optional(),
  websiteUrl: z.string().optional(),
  description: z.string().optional(),
});
/** Name and version of an MCP client or server. */
export type Implementation = z.infer<typeof ImplementationSchema>;
