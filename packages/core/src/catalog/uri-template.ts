/** Variables a URI took from a template: `test://items/{id}` and `test://items/42` give `{ id: '42' }`. */
export type UriVariables = Record<string, string>;

interface Expression {
  readonly operator: '' | '+' | '#' | '/' | '.' | '?' | '&';
  readonly names: readonly string[];
}

const OPERATORS = new Set(['+', '#', '/', '.', '?', '&']);
const NAME = /^[A-Za-z0-9_]+$/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function decode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/**
 * Resource URI templates (RFC 6570) for reading resources: which URIs a template describes and what its
 * variables are. Supports the expressions resource URIs use — `{var}`, `{+var}`, `{#var}`, `{/var}`,
 * `{.var}`, `{?a,b}` and `{&a}`, each with one or more comma-separated names — but not the explode (`*`)
 * or prefix (`:n`) modifiers, which describe URIs too loosely to route reads by.
 */
export class UriTemplate {
  readonly template: string;
  readonly variables: readonly string[];
  readonly #pattern: RegExp;
  /** Names of each capture group of `#pattern`, in order; query captures hold a whole query string. */
  readonly #captures: readonly { readonly names: readonly string[]; readonly query: boolean }[];

  /** Parses `template`; throws a TypeError naming the problem when it is not a template this class reads. */
  constructor(template: string) {
    this.template = template;
    const captures: { names: readonly string[]; query: boolean }[] = [];
    let source = '^';
    let rest = template;
    for (;;) {
      const open = rest.indexOf('{');
      if (open < 0) break;
      const close = rest.indexOf('}', open);
      if (close < 0) throw new TypeError(`URI template '${template}' has a '{' without its '}'`);
      source += escapeRegExp(rest.slice(0, open));
      const expression = UriTemplate.#expression(template, rest.slice(open + 1, close));
      const { operator, names } = expression;
      if (operator === '?' || operator === '&') {
        // A query part: optional, its pairs in any order; parsed after the match.
        source += `(?:${operator === '?' ? '\\?' : '&'}([^#]*))?`;
        captures.push({ names, query: true });
      } else {
        const prefix = operator === '/' ? '/' : operator === '.' ? '\\.' : operator === '#' ? '#' : '';
        const value = operator === '+' || operator === '#' ? '.+?' : operator === '.' ? '[^/?#&,.]+' : '[^/?#&,]+';
        // Several names of one expression are joined with ',' ('/' and '.' repeat their prefix instead).
        const joiner = operator === '/' ? '/' : operator === '.' ? '\\.' : ',';
        source += prefix + names.map(() => `(${value})`).join(joiner);
        for (const name of names) captures.push({ names: [name], query: false });
      }
      rest = rest.slice(close + 1);
    }
    if (rest.includes('}')) throw new TypeError(`URI template '${template}' has a '}' without its '{'`);
    source += `${escapeRegExp(rest)}$`;
    this.#pattern = new RegExp(source);
    this.#captures = captures;
    this.variables = captures.flatMap((capture) => capture.names);
  }

  /** True when `template` has at least one expression (otherwise it names exactly one URI). */
  get isTemplate(): boolean {
    return this.variables.length > 0;
  }

  /** The variables of `uri` when the template describes it, else undefined. */
  match(uri: string): UriVariables | undefined {
    const found = this.#pattern.exec(uri);
    if (found === null) return undefined;
    const variables: UriVariables = {};
    for (const [index, capture] of this.#captures.entries()) {
      const raw = found[index + 1];
      if (raw === undefined) continue;
      if (!capture.query) {
        const value = decode(raw);
        if (value === undefined) return undefined;
        variables[capture.names[0] as string] = value;
        continue;
      }
      for (const pair of raw.split('&')) {
        const eq = pair.indexOf('=');
        const name = decode(eq < 0 ? pair : pair.slice(0, eq));
        const value = decode(eq < 0 ? '' : pair.slice(eq + 1));
        if (name === undefined || value === undefined) return undefined;
        if (capture.names.includes(name)) variables[name] = value;
      }
    }
    return variables;
  }

  static #expression(template: string, body: string): Expression {
    const first = body.charAt(0);
    const operator = (OPERATORS.has(first) ? first : '') as Expression['operator'];
    const names = (operator === '' ? body : body.slice(1)).split(',');
    for (const name of names) {
      if (!NAME.test(name)) {
        throw new TypeError(
          `URI template '${template}': '{${body}}' is not supported; use names of A-Z a-z 0-9 _ ` +
            'without the * or :n modifiers',
        );
      }
    }
    return { operator, names };
  }
}
