export { type CommandScope, type Config, ConfigError, loadConfig, type SettingName, settingsFor } from './config.js';
export { createLogger, REDACTED_PATHS } from './logger.js';
export { main } from './main.js';
export { SETTINGS, type Setting, type SettingScope } from './settings.js';
export { parseTokens } from './tokens.js';
