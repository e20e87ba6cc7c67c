import { readFileSync } from 'node:fs';
import { type CommandScope, ConfigError, loadConfig, type SettingName, settingsFor } from './config.js';

/** A command that reads settings: its usage line, what it does, and which settings it takes. */
interface SettingsCommand {
  readonly usage: string;
  readonly summary: string;
  readonly scope: CommandScope;
  /** Settings of the scope this command does not read (the bridge runs no tool modules, a worker no config). */
  readonly omit: readonly SettingName[];
  /** Settings listed first: what the command is about. */
  readonly lead: readonly SettingName[];
  /** Defaults that differ from the settings' own (dev stops within seconds on Ctrl-C). */
  readonly defaults?: Partial<Record<SettingName, string>>;
  /** What stands in for an unset setting when it is no plain value. */
  readonly unsetMeans?: Partial<Record<SettingName, string>>;
  /** What its arguments (after the flags) are, when it takes any: tool modules. */
  readonly arguments?: string;
}

/** `taskgate dev` drains briefly: a developer's Ctrl-C should not wait 25 s for a task that waits for input. */
export const DEV_DEFAULTS: Partial<Record<SettingName, string>> = {
  TASKGATE_DRAIN_TIMEOUT_MS: '2000',
  TASKGATE_ABORT_GRACE_MS: '1000',
};

export const SETTINGS_COMMANDS: Record<'gateway' | 'worker' | 'bridge' | 'dev', SettingsCommand> = {
  gateway: {
    usage: 'taskgate gateway [flags]',
    summary: 'Serves MCP (Streamable HTTP) on HOST:PORT/mcp, with /healthz, /readyz and /metrics.',
    scope: 'gateway',
    omit: [],
    lead: ['HOST', 'PORT'],
  },
  worker: {
    usage: 'taskgate worker --tools <module>[,<module>] [flags]',
    summary: 'Runs the tools, resources and prompts the modules export until SIGTERM or SIGINT, then drains.',
    scope: 'worker',
    omit: ['TASKGATE_BRIDGE_CONFIG'],
    lead: ['TASKGATE_TOOLS'],
    arguments: 'tool modules',
  },
  bridge: {
    usage: 'taskgate bridge --config bridge.yaml [flags]',
    summary: 'Offers the jobs of existing queues as MCP task tools, as the config file names them.',
    scope: 'worker',
    omit: ['TASKGATE_TOOLS'],
    lead: ['TASKGATE_BRIDGE_CONFIG'],
  },
  dev: {
    usage: 'taskgate dev [--tools <module>[,<module>]] [flags]',
    summary:
      'A private redis-server (data in .data/; none when REDIS_URL is set), a gateway and a worker with the\n' +
      'example tools, in one process. With REDIS_URL and TASKGATE_CURSOR_SECRET set it writes no file.\n' +
      'Ctrl-C stops it within a few seconds; a second Ctrl-C at once.',
    scope: 'dev',
    // The gateway's /metrics shows the worker's metrics too: dev opens no listener of the worker's own.
    omit: ['TASKGATE_BRIDGE_CONFIG', 'TASKGATE_METRICS_PORT', 'TASKGATE_METRICS_HOST'],
    arguments: 'tool modules',
    lead: ['TASKGATE_TOOLS', 'PORT'],
    defaults: DEV_DEFAULTS,
    unsetMeans: {
      REDIS_URL: 'a private redis-server, data in .data/redis',
      TASKGATE_CURSOR_SECRET: 'one kept in .data/cursor-secret',
    },
  },
};

/**
 * The settings of a command, from its flags and the environment: a flag of another command is refused, and so
 * are arguments after the flags when it takes none (never read and ignored).
 */
export function loadCommandConfig(
  command: keyof typeof SETTINGS_COMMANDS,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): ReturnType<typeof loadConfig> {
  const spec = SETTINGS_COMMANDS[command];
  const loaded = loadConfig(spec.scope, argv, env, command, spec.omit);
  if (spec.arguments === undefined && loaded.positionals.length > 0) {
    const given = loaded.positionals.map((arg) => `'${arg}'`).join(' ');
    throw new ConfigError([`taskgate ${command} takes no arguments, got ${given} (taskgate ${command} --help)`]);
  }
  return loaded;
}

/** The flags a settings command takes: its leading ones, then the others in declaration order. */
export function commandSettings(command: keyof typeof SETTINGS_COMMANDS) {
  const spec = SETTINGS_COMMANDS[command];
  const taken = settingsFor(spec.scope).filter((setting) => !spec.omit.includes(setting.env));
  const rank = (env: SettingName): number => (spec.lead.includes(env) ? spec.lead.indexOf(env) : spec.lead.length);
  return taken.sort((a, b) => rank(a.env) - rank(b.env));
}

/** `taskgate <command> --help`: usage, then every flag with its environment variable, default and meaning. */
export function commandHelp(command: keyof typeof SETTINGS_COMMANDS): string {
  const spec = SETTINGS_COMMANDS[command];
  const lines = [
    `usage: ${spec.usage}`,
    '',
    spec.summary,
    '',
    'flags (each also an environment variable; a flag wins):',
  ];
  const settings = commandSettings(command);
  const width = Math.max(...settings.map((setting) => setting.flag.length)) + 12;
  for (const setting of settings) {
    const fallback =
      spec.unsetMeans?.[setting.env] ??
      spec.defaults?.[setting.env] ??
      ('default' in setting ? setting.default : undefined);
    const shown = fallback === undefined ? 'no default' : fallback === '' ? 'default empty' : `default ${fallback}`;
    lines.push(`${`  ${setting.flag} <value>`.padEnd(width)}${setting.env} (${shown})`);
    lines.push(`      ${setting.description}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The version of the `taskgate` command (its package's). */
export function cliVersion(): string {
  // src/ and dist/ both sit one level under the package root.
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
