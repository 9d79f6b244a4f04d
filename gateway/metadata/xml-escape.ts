/**
 * Escaping helpers for XML and HTML output.
 *
 * They follow what .NET's XmlTextWriter (the writer behind ASMX) emits:
 * - text: `&` `<` `>` become `&amp;` `&lt;` `&gt;`; everything else is written as is.
 * - attributes (double-quoted): additionally `"` becomes `&quot;`, and the whitespace characters
 *   TAB, LF and CR become character references (`&#x9;` `&#xA;` `&#xD;`) so that attribute-value
 *   normalisation in the reader does not turn them into spaces.
 *
 * Characters that XML 1.0 cannot represent at all (C0 controls other than TAB/LF/CR, lone
 * surrogates, U+FFFE/U+FFFF) are NOT touched here: a character reference would not make them legal
 * either. Use `stripInvalidXmlChars` on untrusted values where that matters.
 *
 * All functions return the input string itself (no allocation) when nothing needs escaping, which
 * is the common case on hot paths.
 */

const TEXT_SPECIAL = /[&<>]/;
const TEXT_SPECIAL_G = /[&<>]/g;
const ATTR_SPECIAL = /[&<>"\t\n\r]/;
const ATTR_SPECIAL_G = /[&<>"\t\n\r]/g;
const HTML_SPECIAL = /[&<>"']/;
const HTML_SPECIAL_G = /[&<>"']/g;

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '\t': '&#x9;',
  '\n': '&#xA;',
  '\r': '&#xD;',
};

function entity(ch: string): string {
  return ENTITIES[ch] ?? ch;
}

/** Escapes a value for XML element content. */
export function escapeXmlText(value: string): string {
  return TEXT_SPECIAL.test(value) ? value.replace(TEXT_SPECIAL_G, entity) : value;
}

/** Escapes a value for a double-quoted XML attribute. */
export function escapeXmlAttr(value: string): string {
  return ATTR_SPECIAL.test(value) ? value.replace(ATTR_SPECIAL_G, entity) : value;
}

/** Escapes a value for HTML element content or a double- or single-quoted HTML attribute. */
export function escapeHtml(value: string): string {
  return HTML_SPECIAL.test(value) ? value.replace(HTML_SPECIAL_G, entity) : value;
}

// Anything outside the XML 1.0 Char production: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
// With the `u` flag a well-formed surrogate pair is one code point (allowed); lone surrogates match.
const INVALID_XML_CHARS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const INVALID_XML_CHARS_G = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Removes characters that cannot appear in an XML 1.0 document, even as character references. */
export function stripInvalidXmlChars(value: string): string {
  return INVALID_XML_CHARS.test(value) ? value.replace(INVALID_XML_CHARS_G, '') : value;
}

/**
 * HttpUtility.HtmlEncode of .NET Framework 4.5+ (WebUtility.HtmlEncode, strict conformance), which
 * ASMX applies to every message of an HTTP GET/POST error: `& < > " '` as entities, U+00A0..U+00FF
 * and characters outside the BMP as decimal references (`&#241;`, `&#128512;`). A lone surrogate
 * becomes U+FFFD.
 */
export function aspNetHtmlEncode(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if ((code >= 0xa0 && code <= 0xff) || code > 0xffff) out += `&#${code};`;
    else if (code >= 0xd800 && code <= 0xdfff) out += '\uFFFD';
    else out += HTML_SPECIAL.test(ch) ? entity(ch) : ch;
  }
  return out;
}
