import { parseArgs } from 'node:util';
import type { z } from 'zod';
import { flagProblem } from './closest-flag.js';
import type { SettingScope } from './setting-schemas.js';
import { SETTINGS } from './settings.js';

type AnySetting = (typeof SETTINGS)[number];
/** Environment variable names of every setting. */
export type SettingName = AnySetting['env'];
/** The parsed value of one setting. */
export type SettingValue<N extends SettingName> = z.output<Extract<AnySetting, { env: N }>['schema']>;
/** Parsed settings: every setting with a default is present; the others may be missing. */
export type Config = {
  [N in SettingName]: Extract<AnySetting, { env: N }> extends { default: string }
    ? SettingValue<N>
    : SettingValue<N> | undefined;
};

/** Every problem with the configuration, each naming the variable and flag to fix. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** Stable string code, for logs and tests. */
  readonly code = 'INVALID_CONFIG';

  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

/** What a command runs: a gateway, a worker, or both (`dev`). */
export type CommandScope = Exclude<SettingScope, 'both'> | 'dev';

/** Settings a command reads. */
export function settingsFor(scope: CommandScope): AnySetting[] {
  return SETTINGS.filter((setting) => scope === 'dev' || setting.scope === scope || setting.scope === 'both');
}

/**
 * Reads the settings of `scope` from flags (first) and environment variables, applies defaults and
 * validates each; throws one ConfigError listing every problem (an unknown flag names the closest known one,
 * and `command` --help). Settings in `omit` are not the command's: their flag is refused (naming the command),
 * never read and ignored. Returns the parsed config and the positional arguments left over.
 */
export function loadConfig(
  scope: CommandScope,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
  command: string = scope,
  omit: readonly SettingName[] = [],
): { config: Config; positionals: string[] } {
  const relevant = settingsFor(scope).filter((setting) => !omit.includes(setting.env));
  const refused = SETTINGS.filter((setting) => !relevant.includes(setting)).flatMap((setting) =>
    argv.some((arg) => arg === setting.flag || arg.startsWith(`${setting.flag}=`))
      ? [
          `${setting.flag} (${setting.env}) is not a flag of taskgate ${command} (taskgate ${command} --help lists every flag)`,
        ]
      : [],
  );
  if (refused.length > 0) throw new ConfigError(refused);
  const options = Object.fromEntries(relevant.map((setting) => [setting.flag.slice(2), { type: 'string' as const }]));
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ConfigError([
      flagProblem(
        error,
        relevant.map((setting) => setting.flag),
        command,
      ),
    ]);
  }
  const problems: string[] = [];
  const config: Record<string, unknown> = {};
  for (const setting of relevant) {
    const fromFlag = parsed.values[setting.flag.slice(2)];
    const raw =
      typeof fromFlag === 'string'
        ? fromFlag
        : (env[setting.env] ?? ('default' in setting ? setting.default : undefined));
    if (raw === undefined || raw === '') {
      if ('default' in setting) config[setting.env] = setting.schema.parse(setting.default);
      continue;
    }
    const result = setting.schema.safeParse(raw);
    if (result.success) config[setting.env] = result.data;
    else
      problems.push(
        `${setting.env} (${setting.flag}): ${result.error.issues.map((issue) => issue.message).join('; ')}`,
      );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { config: config as Config, positionals: parsed.positionals };
}
