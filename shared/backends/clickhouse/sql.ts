/**
 * SQL text building for ClickHouse 18.16, which has no query parameters (`{p:Type}`): every value
 * that reaches a query goes through one of these. Only string literals, identifiers and numbers
 * are ever interpolated; anything else is refused.
 */

class SqlValueError extends Error {}

// Characters escaped in a string literal: the backslash and the quote (the only two that could end
// or bend the literal), plus control characters, written as escapes so a query stays one line.
// eslint-disable-next-line no-control-regex
const LITERAL_SPECIALS = /[\\'\u0000-\u001f\u007f]/g;

function escapeChar(ch: string): string {
  switch (ch) {
    case '\\':
      return '\\\\';
    case "'":
      return "\\'";
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
    case '\0':
      return '\\0';
    default:
      return `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
  }
}

// A UTF-16 surrogate without its partner: not encodable as UTF-8, and ClickHouse refuses the
// `\udXXX` escape JSON.stringify writes for it ("missing second part of surrogate pair").
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Replaces lone surrogates with U+FFFD, as a UTF-8 encoder would; other text is unchanged. */
export function wellFormed(value: string): string {
  return ANY_SURROGATE.test(value) ? value.replace(LONE_SURROGATE, '\ufffd') : value;
}

const ANY_SURROGATE = /[\ud800-\udfff]/;

/** A ClickHouse string literal: `'...'` with `\` and `'` (and control characters) escaped. */
export function quoteString(value: string): string {
  if (typeof value !== 'string') throw new SqlValueError('string literal expected');
  return `'${wellFormed(value).replace(LITERAL_SPECIALS, escapeChar)}'`;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A database or table name, back-quoted. Only `[A-Za-z_][A-Za-z0-9_]*` is accepted. */
export function quoteIdentifier(name: string): string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
    throw new SqlValueError(`invalid ClickHouse identifier ${JSON.stringify(name)}: use letters, digits and _`);
  }
  return `\`${name}\``;
}

/** A non-negative whole number (a LIMIT, a version), as SQL text. */
export function sqlUInt(value: number | bigint): string {
  if (typeof value === 'bigint') {
    if (value < 0n || value > 18446744073709551615n) throw new SqlValueError('UInt64 out of range');
    return value.toString();
  }
  if (!Number.isSafeInteger(value) || value < 0) throw new SqlValueError(`non-negative integer expected, got ${String(value)}`);
  return String(value);
}

/** A finite number as SQL text. */
export function sqlFloat(value: number): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new SqlValueError(`finite number expected, got ${String(value)}`);
  return String(value);
}
