/** Edit distance between two strings (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The known flag nearest to `flag`, or undefined when none is near enough to be a likely typo. */
export function closestFlag(flag: string, known: readonly string[]): string | undefined {
  let best: { flag: string; distance: number } | undefined;
  for (const candidate of known) {
    const d = distance(flag, candidate);
    if (best === undefined || d < best.distance) best = { flag: candidate, distance: d };
  }
  // A third of the flag's letters may be wrong; beyond that a guess misleads more than it helps.
  return best !== undefined && best.distance <= Math.max(2, Math.floor(flag.length / 3)) ? best.flag : undefined;
}

/**
 * The message for a `node:util` parseArgs error: an unknown flag names the closest known one and where every
 * flag is listed; other errors keep their message.
 */
export function flagProblem(error: unknown, known: readonly string[], command: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(message)?.[1];
  if (unknown === undefined) return message;
  const near = closestFlag(unknown.split('=')[0] ?? unknown, known);
  const hint = near === undefined ? '' : `; did you mean ${near}?`;
  return `unknown flag ${unknown}${hint} (taskgate ${command} --help lists every flag)`;
}
