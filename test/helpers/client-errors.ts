import { clientText, type ClientErrorKey, type ClientErrorParams } from '../../gateway/errors/registry.js';
import { escapeXmlText } from '../../gateway/metadata/xml-escape.js';

/**
 * Registry texts as they appear on the wire, for tests that assert an error by its key. The golden
 * and fidelity tests keep ASMX's bytes written out instead: they are the independent witness the
 * registry is checked against.
 */
export function faultstring<K extends ClientErrorKey>(key: K, ...params: ClientErrorParams<K>): string {
  return `<faultstring>${escapeXmlText(clientText(key, ...params))}</faultstring>`;
}

/** The one `text/plain` line the router and the HTTP GET/POST bindings answer. */
export function errorLine<K extends ClientErrorKey>(key: K, ...params: ClientErrorParams<K>): string {
  return `${clientText(key, ...params)}\r\n`;
}
