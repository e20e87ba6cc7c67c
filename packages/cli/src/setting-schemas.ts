import { z } from 'zod';

/** Which processes read a setting. */
export type SettingScope = 'gateway' | 'worker' | 'both';

/** One configuration setting: its environment variable, its flag, how it is parsed and what it means. */
export interface Setting {
  readonly env: string;
  readonly flag: string;
  readonly scope: SettingScope;
  readonly schema: z.ZodType;
  /** The default as documented (undefined: none). */
  readonly default?: string;
  readonly description: string;
}

/** An integer setting in [min, max]. */
export const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
/** A comma-separated list (blanks dropped). */
export const list = z.string().transform((value) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== ''),
);
/** An absolute URL. */
export const url = z.string().refine((value) => URL.canParse(value), 'must be an absolute URL');
/** `<points>/<seconds>` (e.g. `120/60`: 120 operations a minute per principal), or `off`. */
export const rateLimit = z
  .string()
  .regex(/^(off|[1-9][0-9]{0,8}\/[1-9][0-9]{0,6})$/, 'use <points>/<seconds>, e.g. 120/60, or off')
  .transform((value) => {
    if (value === 'off') return undefined;
    const [points, durationSec] = value.split('/').map(Number) as [number, number];
    return { points, durationSec };
  });
