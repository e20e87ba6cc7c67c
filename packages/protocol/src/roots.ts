import { z } from 'zod';

/** A root the client exposes (`roots/list`): a `file://` URI and an optional name. */
export const RootSchema = z.looseObject({ uri: z.string(), name: z.string().optional() });
export type Root = z.infer<typeof RootSchema>;

/** The client's answer to `roots/list`. */
export const ListRootsResultSchema = z.looseObject({ roots: z.array(RootSchema) });
export type ListRootsResult = z.infer<typeof ListRootsResultSchema>;
