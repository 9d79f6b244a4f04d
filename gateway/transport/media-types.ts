/** The content types the gateway answers with, and a request's Content-Type read into its parts. */

export const TEXT_PLAIN = 'text/plain; charset=utf-8';
export const TEXT_XML = 'text/xml; charset=utf-8';

interface MediaType {
  readonly type: string;
  readonly params: ReadonlyMap<string, string>;
}

/** Parsed Content-Type values: nearly every request of a client repeats the same few. */
const mediaTypes = new Map<string, MediaType>();
const MEDIA_TYPES_KEPT = 256;
/** Longer values (a long SOAP 1.2 action) are parsed every time rather than kept. */
const MEDIA_TYPE_KEPT_LENGTH = 256;

/** Parses `type/subtype; a=b; c="d"` into the lower-cased base type and its parameters. */
export function parseMediaType(value: string): MediaType {
  const known = mediaTypes.get(value);
  if (known !== undefined) return known;
  const parsed = parseMediaTypeNow(value);
  if (value.length <= MEDIA_TYPE_KEPT_LENGTH) {
    // Bounded whatever clients send: past the cap, start over (the common values come back at once).
    if (mediaTypes.size >= MEDIA_TYPES_KEPT) mediaTypes.clear();
    mediaTypes.set(value, parsed);
  }
  return parsed;
}

function parseMediaTypeNow(value: string): MediaType {
  const parts = value.split(';');
  const params = new Map<string, string>();
  for (const p of parts.slice(1)) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1'));
  }
  return { type: (parts[0] ?? '').trim().toLowerCase(), params };
}
