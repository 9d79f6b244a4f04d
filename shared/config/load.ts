import { readFileSync } from 'node:fs';
import { SettingError, type Env, type Setting } from './kinds.js';
import { SETTINGS } from './settings.js';

type Table = typeof SETTINGS;
type ValueOf<S> = S extends Setting<infer T> ? T : never;

/** The configuration of a process, by section, as the table declares it. */
export type Config = { readonly [S in keyof Table]: { readonly [K in keyof Table[S]]: ValueOf<Table[S][K]> } };

export class ConfigError extends Error {}

interface SettingEntry {
  section: keyof Table;
  key: string;
  setting: Setting<unknown>;
}

/** The table as a list, in declaration order. */
export function settingEntries(): SettingEntry[] {
  const out: SettingEntry[] = [];
  for (const [section, settings] of Object.entries(SETTINGS) as [keyof Table, Record<string, Setting<unknown>>][]) {
    for (const [key, setting] of Object.entries(settings)) out.push({ section, key, setting });
  }
  return out;
}

type ReadFile = (file: string) => string;

/**
 * A secret's raw value: the variable itself or the file `<NAME>_FILE` names (one trailing
 * newline dropped, as `echo` and editors leave it). Errors name the variable and the file, never
 * what the file holds.
 */
function rawValue(setting: Setting<unknown>, env: Env, readFile: ReadFile): string | undefined {
  const direct = env[setting.env];
  if (!setting.secret) return direct;
  const fileName = env[`${setting.env}_FILE`];
  if (fileName === undefined || fileName === '') return direct;
  if (direct !== undefined && direct !== '') throw new SettingError(`Set ${setting.env} or ${setting.env}_FILE, not both.`);
  let content: string;
  try {
    content = readFile(fileName);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new SettingError(`${setting.env}_FILE: cannot read ${fileName} (${code}).`);
  }
  const value = content.replace(/\r?\n$/, '');
  if (value === '') throw new SettingError(`${setting.env}_FILE: ${fileName} is empty.`);
  return value;
}

/**
 * Reads every setting from the environment (12-factor), checks each, and fails with every
 * problem at once, one line each, naming the variable.
 */
export function loadConfig(env: Env = process.env, readFile: ReadFile = (f) => readFileSync(f, 'utf8')): Config {
  const errors: string[] = [];
  const config: Record<string, Record<string, unknown>> = {};
  for (const { section, key, setting } of settingEntries()) {
    try {
      const raw = rawValue(setting, env, readFile);
      (config[section] ??= {})[key] = raw === undefined || raw === '' ? setting.fallback(env) : setting.parse(raw);
    } catch (err) {
      if (!(err instanceof SettingError)) throw err;
      errors.push(err.message);
    }
  }
  if (errors.length > 0) throw new ConfigError(errors.join('\n'));
  return config as Config;
}

/**
 * The effective configuration as `NAME=value` lines by section, each with its description (what
 * `npm start -- --config` prints). Secrets show only whether they are set.
 */
export function describeConfig(config: Config, env: Env = process.env): string {
  const lines: string[] = [];
  let section = '';
  for (const entry of settingEntries()) {
    if (entry.section !== section) {
      section = entry.section;
      lines.push('', `# ${section} (config.${section})`);
    }
    const { setting } = entry;
    const value = (config[entry.section] as Record<string, unknown>)[entry.key];
    const set = (env[setting.env] ?? '') !== '' || (setting.secret && (env[`${setting.env}_FILE`] ?? '') !== '');
    const shown = setting.secret ? (set ? '(set)' : '(unset)') : setting.show(value);
    const origin = set ? '' : ` [default: ${setting.defaultText.replace(/`/g, '')}]`;
    const notes = `${setting.doc}${setting.tuning ? ' (tuning)' : ''}${setting.secret ? ` (secret; or ${setting.env}_FILE)` : ''}`;
    lines.push(`${setting.env}=${shown}  # ${notes}${origin}`);
  }
  return lines.join('\n').trimStart() + '\n';
}
