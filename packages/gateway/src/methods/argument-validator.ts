import { createHash } from 'node:crypto';
import { ProtocolError, type Tool } from '@taskgate/protocol';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import * as ajvFormats from 'ajv-formats';

/** What checking a call's arguments found. */
export type ArgumentCheck = { readonly ok: true } | { readonly ok: false; readonly message: string };

// ajv-formats is CommonJS with a default export; under NodeNext its plugin is the module's `default`.
const addFormats = ajvFormats.default as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * Validates tool arguments against the tool's input schema (JSON Schema 2020-12) before anything is created
 * or enqueued. Compiled validators are cached by a digest of the schema, so a tool whose workers publish a
 * new schema gets a new validator, and unchanged ones compile once per process.
 */
export class ArgumentValidator {
  readonly #ajv: Ajv2020;
  readonly #cache = new Map<string, ValidateFunction>();
  /** The validator of a schema object seen before (the catalog hands out the same entry while it caches it). */
  readonly #bySchema = new WeakMap<object, ValidateFunction>();
  readonly #maxCached: number;

  constructor(maxCached = 1000) {
    // strict: false — schemas come from tool authors and may carry keywords ajv does not know (e.g. zod's).
    this.#ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
    this.#maxCached = maxCached;
  }

  /** Checks `args` against the tool's input schema; a schema ajv cannot compile is our fault (-32603). */
  check(tool: Tool, args: Record<string, unknown>): ArgumentCheck {
    const validate = this.#validator(tool);
    if (validate(args)) return { ok: true };
    const problems = this.#ajv.errorsText(validate.errors, { dataVar: 'arguments', separator: '; ' });
    return { ok: false, message: `Invalid arguments for tool '${tool.name}': ${problems}` };
  }

  #validator(tool: Tool): ValidateFunction {
    const schema = tool.inputSchema as object;
    const known = this.#bySchema.get(schema);
    if (known !== undefined) return known;
    const validate = this.#compiled(tool);
    this.#bySchema.set(schema, validate);
    return validate;
  }

  /** The validator of the schema's text: compiled once per digest (a tool's schema re-read, or another's alike). */
  #compiled(tool: Tool): ValidateFunction {
    const source = JSON.stringify(tool.inputSchema);
    const key = createHash('sha256').update(source).digest('base64url');
    let validate = this.#cache.get(key);
    if (validate !== undefined) return validate;
    try {
      validate = this.#ajv.compile(JSON.parse(source) as object);
    } catch {
      throw ProtocolError.internal(`Tool '${tool.name}' has an input schema the gateway cannot use`);
    }
    // A simple bound: schemas rarely change, so dropping everything now and then costs little.
    if (this.#cache.size >= this.#maxCached) {
      this.#cache.clear();
      this.#ajv.removeSchema();
    }
    this.#cache.set(key, validate);
    return validate;
  }
}
