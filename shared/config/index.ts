/**
 * Configuration: every setting declared once in settings.ts, read and checked by load.ts.
 * docs/configuration.md lists them (a unit test keeps it in step); `npm start -- --config` prints
 * what a process would run with.
 */
export { ConfigError, describeConfig, loadConfig, settingEntries, type Config, type SettingEntry } from './load.js';
export { SettingError, type Env, type Setting } from './kinds.js';
export {
  DEFAULT_MAP_TILE_URL,
  MAX_EVENT_ID,
  MAX_GATEWAY_THREADS,
  SETTINGS,
  defaultGatewayThreads,
  isValidTimeZone,
  type RedisSentinelAddress,
} from './settings.js';

export { ConfigurationMissing, deploymentMode, redisConfigured, type DeploymentMode } from './mode.js';
