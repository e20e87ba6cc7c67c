/**
 * Bearer tokens from text: one `token=principal` pair per line or comma-separated; blank lines and `#`
 * comments are skipped. Suits both an environment variable and a file's contents. Throws naming the rule,
 * never the offending text (it may be a token).
 */
export function parseTokens(text: string): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const raw of text.split(/[\n,]/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    const token = line.slice(0, eq).trim();
    const principal = line.slice(eq + 1).trim();
    if (eq <= 0 || token === '' || principal === '') {
      throw new Error('each token entry must read token=principal');
    }
    tokens.set(token, principal);
  }
  return tokens;
}
