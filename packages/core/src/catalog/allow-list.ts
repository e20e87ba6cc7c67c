/** What may carry an allow list: a catalog entry of any kind. */
export interface Allowed {
  /** Principals (globs) who may see and use the entry; absent: everyone. */
  readonly allow?: readonly string[];
}

// Compiled globs by their text: the same few lists are checked on every listing.
const compiled = new Map<string, RegExp>();

/** A principal glob: `*` any run of characters (`/` too), `?` one; everything else literal. */
function globRegex(glob: string): RegExp {
  let regex = compiled.get(glob);
  if (regex === undefined) {
    const source = glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.');
    regex = new RegExp(`^${source}$`, 's');
    if (compiled.size >= 10_000) compiled.clear();
    compiled.set(glob, regex);
  }
  return regex;
}

/**
 * True when `principal` may see and use `entry`: an entry without `allow` is everyone's; one with it is only
 * for principals a glob matches. A caller without a principal (auth off) matches no glob, so it sees only
 * entries without `allow`: an allow list never opens up because authentication is switched off.
 */
export function visibleTo(entry: Allowed, principal: string | undefined): boolean {
  if (entry.allow === undefined) return true;
  if (principal === undefined) return false;
  return entry.allow.some((glob) => globRegex(glob).test(principal));
}
