import { z } from 'zod';

// The restricted JSON Schema of a form-mode elicitation: one flat object whose properties are primitives.

const DescribedSchema = z.object({
  title: z.string().optional(),
  description: z.string().optional(),
});

/** A yes/no field. */
export const BooleanSchemaSchema = DescribedSchema.extend({
  type: z.literal('boolean'),
  default: z.boolean().optional(),
});
/** A boolean field definition. */
export type BooleanSchema = z.infer<typeof BooleanSchemaSchema>;

/** A free-text field, optionally with a length range or a well-known format. */
export const StringSchemaSchema = DescribedSchema.extend({
  type: z.literal('string'),
  minLength: z.number().optional(),
  maxLength: z.number().optional(),
  format: z.enum(['email', 'uri', 'date', 'date-time']).optional(),
  default: z.string().optional(),
});
/** A string field definition. */
export type StringSchema = z.infer<typeof StringSchemaSchema>;

/** A numeric field, optionally bounded. */
export const NumberSchemaSchema = DescribedSchema.extend({
  type: z.enum(['number', 'integer']),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  default: z.number().optional(),
});
/** A number field definition. */
export type NumberSchema = z.infer<typeof NumberSchemaSchema>;

const TitledOptionSchema = z.object({ const: z.string(), title: z.string() });

/** Pick one string from `enum`. */
export const UntitledSingleSelectEnumSchemaSchema = DescribedSchema.extend({
  type: z.literal('string'),
  enum: z.array(z.string()),
  default: z.string().optional(),
});

/** Pick one option from `oneOf`, each with a display title. */
export const TitledSingleSelectEnumSchemaSchema = DescribedSchema.extend({
  type: z.literal('string'),
  oneOf: z.array(TitledOptionSchema),
  default: z.string().optional(),
});

/** Pre-2025-11-25 titled enum (`enum` plus parallel `enumNames`); still accepted from older servers. */
export const LegacyTitledEnumSchemaSchema = DescribedSchema.extend({
  type: z.literal('string'),
  enum: z.array(z.string()),
  enumNames: z.array(z.string()).optional(),
  default: z.string().optional(),
});

const MultiSelectBaseSchema = DescribedSchema.extend({
  type: z.literal('array'),
  minItems: z.number().optional(),
  maxItems: z.number().optional(),
  default: z.array(z.string()).optional(),
});

/** Pick several strings from `items.enum`. */
export const UntitledMultiSelectEnumSchemaSchema = MultiSelectBaseSchema.extend({
  items: z.object({ type: z.literal('string'), enum: z.array(z.string()) }),
});

/** Pick several options from `items.anyOf`, each with a display title. */
export const TitledMultiSelectEnumSchemaSchema = MultiSelectBaseSchema.extend({
  items: z.object({ anyOf: z.array(TitledOptionSchema) }),
});

/** Any enumeration field, single or multiple choice. */
export const EnumSchemaSchema = z.union([
  LegacyTitledEnumSchemaSchema,
  UntitledSingleSelectEnumSchemaSchema,
  TitledSingleSelectEnumSchemaSchema,
  UntitledMultiSelectEnumSchemaSchema,
  TitledMultiSelectEnumSchemaSchema,
]);
/** An enumeration field definition. */
export type EnumSchema = z.infer<typeof EnumSchemaSchema>;

/** One property of `requestedSchema`. Enumerations come first so their extra members survive parsing. */
export const PrimitiveSchemaDefinitionSchema = z.union([
  EnumSchemaSchema,
  BooleanSchemaSchema,
  StringSchemaSchema,
  NumberSchemaSchema,
]);
/** One property of an elicitation form. */
export type PrimitiveSchemaDefinition = z.infer<typeof PrimitiveSchemaDefinitionSchema>;

/** The form a form-mode elicitation asks the user to fill: top-level primitive properties only. */
export const ElicitRequestedSchemaSchema = z.object({
  type: z.literal('object'),
  properties: z.record(z.string(), PrimitiveSchemaDefinitionSchema),
  required: z.array(z.string()).optional(),
});
/** The form of a form-mode elicitation. */
export type ElicitRequestedSchema = z.infer<typeof ElicitRequestedSchemaSchema>;
