export { type CommandScope, type Config, ConfigError, loadConfig, type SettingName, settingsFor } from './config.js';
export { createLogger, REDACTED_PATHS } from './logger.js';
export { main } from './main.js';
export type { Setting, SettingScope } from './setting-schemas.js';
export { SETTINGS } from './settings.js';
export { parseTokens } from './tokens.js';
