/**
 * The kinds of setting the configuration table (settings.ts) is written in. A setting is one
 * environment variable: how it is parsed and checked, its default, and what the docs and
 * `--config` say of it. Parsers throw `SettingError` with a message that names the variable.
 */

export type Env = Readonly<Record<string, string | undefined>>;

export class SettingError extends Error {}

export interface Setting<T> {
  /** The environment variable. */
  readonly env: string;
  /** One line for `--config` and the docs check; docs/configuration.md may say more. */
  readonly doc: string;
  /** The default as docs/configuration.md writes it (checked by a unit test). */
  readonly defaultText: string;
  /** Read from `<env>_FILE` as well (one of the two); never shown by `--config`. */
  readonly secret: boolean;
  /** An internal switch for measuring and fallbacks, not a product setting (its own docs section). */
  readonly tuning: boolean;
  /** The value of a set (non-empty) variable, or a SettingError. */
  parse(raw: string): T;
  /** The value when the variable is unset or empty; may depend on other variables. */
  fallback(env: Env): T;
  /** How `--config` prints the value (passwords inside URLs masked). */
  show(value: T): string;
}

interface Common {
  env: string;
  doc: string;
  tuning?: boolean;
  secret?: boolean;
}

function setting<T>(c: Common, rest: Pick<Setting<T>, 'parse' | 'fallback' | 'defaultText'> & Partial<Pick<Setting<T>, 'show'>>): Setting<T> {
  return {
    env: c.env,
    doc: c.doc,
    secret: c.secret ?? false,
    tuning: c.tuning ?? false,
    show: (v) => String(v),
    ...rest,
  };
}

type Fallback<T> = T | ((env: Env) => T);
const resolve = <T>(f: Fallback<T>, env: Env): T => (typeof f === 'function' ? (f as (env: Env) => T)(env) : f);

/**
 * A whole number from `min` to `max`, in the variable's own unit; `times` converts it to the
 * value the code holds (minutes to milliseconds, say).
 */
export function whole(
  c: Common & { default: Fallback<number>; defaultText?: string; min?: number; max?: number; times?: number },
): Setting<number> {
  const min = c.min ?? 0;
  const times = c.times ?? 1;
  return setting(c, {
    defaultText: c.defaultText ?? `\`${String(c.default)}\``,
    parse(raw) {
      if (!/^\d+$/.test(raw.trim())) throw new SettingError(`${c.env} must be a whole number, got "${raw}".`);
      const n = Number(raw);
      if (n < min) throw new SettingError(`${c.env} must be at least ${min}, got ${n}.`);
      if (c.max !== undefined && n > c.max) throw new SettingError(`${c.env} must be at most ${c.max}, got ${n}.`);
      return n * times;
    },
    fallback: (env) => resolve(c.default, env) * times,
    show: (v) => String(v / times),
  });
}

/** A whole number up to `max`, exact beyond 2^53 (event ids). */
export function bigWhole(c: Common & { default: bigint; max: bigint; maxReason: string }): Setting<bigint> {
  return setting(c, {
    defaultText: `\`${c.default}\``,
    parse(raw) {
      const text = raw.trim();
      if (!/^\d+$/.test(text)) throw new SettingError(`${c.env} must be a whole number, got "${raw}".`);
      const n = BigInt(text);
      if (n > c.max) throw new SettingError(`${c.env} must be at most ${c.max} (${c.maxReason}), got ${text}.`);
      return n;
    },
    fallback: () => c.default,
  });
}

/** Free text, optionally checked and normalised. */
export function text(c: Common & { default: Fallback<string>; defaultText?: string; check?: (raw: string) => string }): Setting<string> {
  return setting(c, {
    defaultText: c.defaultText ?? `\`${typeof c.default === 'string' ? c.default : ''}\``,
    parse: (raw) => (c.check ? c.check(raw) : raw),
    fallback: (env) => {
      const value = resolve(c.default, env);
      return c.check && value !== '' ? c.check(value) : value;
    },
    show: c.secret ? () => '(set)' : (v) => v,
  });
}

/** Text that may be absent (null): an optional service URL, a path, a password. */
export function optional(c: Common & { defaultText: string; check?: (raw: string) => string; show?: (v: string) => string }): Setting<string | null> {
  return setting<string | null>(c, {
    defaultText: c.defaultText,
    parse: (raw) => (c.check ? c.check(raw) : raw),
    fallback: () => null,
    show: (v) => (v === null ? '(unset)' : c.secret ? '(set)' : c.show ? c.show(v) : v),
  });
}

/** One of a few words; matched without regard to case, held as the table writes them. */
export function choice<const W extends string>(c: Common & { default: W; words: readonly W[] }): Setting<W> {
  return setting(c, {
    defaultText: `\`${c.default}\``,
    parse(raw) {
      const found = c.words.find((w) => w.toLowerCase() === raw.trim().toLowerCase());
      if (found === undefined) throw new SettingError(`${c.env} must be ${c.words.slice(0, -1).join(', ')} or ${c.words.at(-1) ?? ''}, got "${raw}".`);
      return found;
    },
    fallback: () => c.default,
  });
}

/** Anything else: a parser of its own (a list, an address list, a URL template). */
export function custom<T>(c: Common & { defaultText: string; parse: (raw: string) => T; fallback: (env: Env) => T; show?: (v: T) => string }): Setting<T> {
  return setting(c, { defaultText: c.defaultText, parse: c.parse, fallback: c.fallback, ...(c.show ? { show: c.show } : {}) });
}

/** A URL with its password replaced, for printing. */
export function maskUrlPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password === '') return url;
    u.password = '****';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}
