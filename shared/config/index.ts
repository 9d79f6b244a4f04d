/**
 * Configuration: every setting declared once in settings.ts, read and checked by load.ts.
 * docs/configuration.md lists them (a unit test keeps it in step); `npm start -- --config` prints
 * what a process would run with.
 */
export { ConfigError, describeConfig, loadConfig, settingEntries, type Config } from './load.js';
export { defaultGatewayThreads, isValidTimeZone } from './values.js';

export { ConfigurationMissing, deploymentMode, redisConfigured } from './mode.js';
