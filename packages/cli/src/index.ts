export { type CommandScope, type Config, ConfigError, loadConfig, type SettingName, settingsFor } from './config.js';
export { main } from './main.js';
export { SETTINGS, type Setting, type SettingScope } from './settings.js';
