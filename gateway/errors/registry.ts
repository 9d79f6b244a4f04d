/**
 * Every error a client can see, in one table (after fastify's lib/errors.js): the key code refers
 * to, the exact text (ASMX's wording where ASMX has one; `{name}` marks what is filled in), the HTTP
 * status, the SOAP fault code, and the docs/protocol.md section that explains it. The bindings, the
 * router and the operation layer answer by key; the tests assert against these texts;
 * test/unit/gateway/errors/registry.unit.test.ts checks docs/protocol.md §Errors against this table, and that every
 * entry marked `differs` has its row in §Differences from ASMX.
 *
 * `fault` is the code of the SOAP fault the SOAP bindings answer with (SOAP 1.2 writes Client as
 * Sender and Server as Receiver); null when the answer is not a fault (a text line, an empty body).
 * The HTTP GET and POST bindings have no fault codes: they answer the same text as one
 * `text/plain` line. Texts holding `\r\n` are ASMX's two-line exception messages.
 */

/** SOAP 1.1 names; SOAP 1.2 translates Client→Sender and Server→Receiver. */
export type FaultCode = 'Client' | 'Server' | 'VersionMismatch';

export interface ClientErrorDef {
  readonly status: 400 | 404 | 405 | 413 | 415 | 500;
  readonly fault: FaultCode | null;
  readonly text: string;
  /** The docs/protocol.md section (without §). */
  readonly docs: string;
  /** When the gateway answers differently from ASMX: the start of its row in §Differences from ASMX. */
  readonly differs?: string;
}

export const CLIENT_ERRORS = {
  // ---- any binding ---------------------------------------------------------------------------
  internalError: { status: 500, fault: 'Server', text: 'Server was unable to process request. ---> An internal error occurred.', docs: 'Errors' },
  bodyTooLarge: { status: 413, fault: null, text: 'Request body exceeds the limit of {limit} bytes.', docs: 'Limits' },
  /** A backend cannot be reached and the operation has no result code to say "retry later" with. */
  unavailable: { status: 500, fault: 'Server', text: 'Server was unable to process request. ---> The service is temporarily unavailable; retry later.', docs: 'Errors' },
  invalidCredentials: {
    status: 500,
    fault: 'Client',
    text: 'Invalid credentials: the SystemUser or Password is wrong, or the provider is disabled or locked out.',
    docs: 'Errors',
  },
  noSession: { status: 500, fault: 'Client', text: 'There is no valid session: call Login first.', docs: 'Errors' },

  // ---- routing (gateway/router.ts) -------------------------------------------------------------
  badContentLength: { status: 400, fault: null, text: 'Bad Request: conflicting or invalid Content-Length headers.', docs: 'Routing' },
  notFound: { status: 404, fault: null, text: 'Not found.', docs: 'Routing', differs: 'Other verbs on `{path}`, unknown paths' },
  methodNotAllowed: { status: 405, fault: null, text: 'Method not allowed.', docs: 'Routing', differs: 'Another verb (PUT, DELETE, …) on `{path}/Op`' },
  badEscape: { status: 400, fault: null, text: 'Bad request: the URL holds an invalid %-escape.', docs: 'Routing' },
  unknownOperationPage: { status: 404, fault: null, text: 'Unknown operation.', docs: 'Routing' },
  headOnOperation: { status: 500, fault: null, text: "Request format is unrecognized for URL unexpectedly ending in '{path}'.", docs: 'Routing' },

  // ---- SOAP (gateway/bindings/soap/) ---------------------------------------------------------
  /** The body is empty and the Content-Type is that of the SOAP version ASMX guesses. */
  unsupportedMediaType: { status: 415, fault: null, text: '', docs: 'Errors' },
  notWellFormed: {
    status: 400,
    fault: 'Client',
    text: 'Server was unable to read request. ---> There is an error in the XML document: {detail}',
    docs: 'Errors',
    differs: 'XML that is not well-formed, or with a DOCTYPE',
  },
  versionMismatch: {
    status: 500,
    fault: 'VersionMismatch',
    text: 'Possible SOAP version mismatch: Envelope namespace {namespace} was unexpected. Expecting http://schemas.xmlsoap.org/soap/envelope/.',
    docs: 'Errors',
  },
  rootNotEnvelope: { status: 500, fault: 'VersionMismatch', text: 'The root element {name} is not a SOAP Envelope.', docs: 'Errors' },
  noEnvelope: { status: 500, fault: 'VersionMismatch', text: 'The root element is not a SOAP Envelope.', docs: 'Errors' },
  noBody: { status: 500, fault: 'Client', text: 'The SOAP message has no Body element.', docs: 'Errors' },
  soapActionNotRecognized: {
    status: 500,
    fault: 'Client',
    text: 'Server did not recognize the value of HTTP Header SOAPAction: {action}.',
    docs: 'Routing',
    differs: 'SOAPAction disagreeing with the Body element',
  },
  actionNotRecognized: { status: 500, fault: 'Client', text: "Unable to handle request. The action '{action}' was not recognized.", docs: 'Routing' },
  noAction: {
    status: 500,
    fault: 'Client',
    text: 'Unable to handle request without a valid action parameter. Please supply a valid soap action.',
    docs: 'Routing',
  },
  unreadableValue: {
    status: 500,
    fault: 'Client',
    text: "Server was unable to read request. ---> Input string '{text}' for {name} was not in a correct format.",
    docs: 'Errors',
  },

  // ---- HTTP GET and POST (gateway/bindings/form/) -------------------------------------------
  methodNameNotValid: {
    status: 500,
    fault: null,
    text: '{name} Web Service method name is not valid.',
    docs: 'Routing',
    differs: 'Client text quoted in an HTTP GET/POST error',
  },
  methodNameWrongCase: {
    status: 500,
    fault: null,
    text: "Invalid method name '{name}',  method names are case sensitive.   The method name '{intended}' with the same name but different casing was found.\r\nParameter name: methodName",
    docs: 'Routing',
  },
  requestFormatInvalid: { status: 500, fault: null, text: 'Request format is invalid: {contentType}.', docs: 'Errors' },
  missingParameter: { status: 500, fault: null, text: 'Missing parameter: {name}.', docs: 'Errors' },
  /** Convert.ChangeType's failure wrapped by ASMX's ScalarFormatter (shared/dotnet/dotnet-convert.ts). */
  cannotConvert: {
    status: 500,
    fault: null,
    text: 'Cannot convert {text} to {type}.\r\nParameter name: type ---> {reason}',
    docs: 'Value conversion',
    differs: 'Client text quoted in an HTTP GET/POST error',
  },
} as const satisfies Record<string, ClientErrorDef>;

export type ClientErrorKey = keyof typeof CLIENT_ERRORS;

/** The `{name}`s of a text, as a union of names. */
type Placeholders<T extends string> = T extends `${string}{${infer P}}${infer Rest}` ? P | Placeholders<Rest> : never;

/** What `clientText` needs for `key`: nothing, or a value for each of its placeholders. */
export type ClientErrorParams<K extends ClientErrorKey> = [Placeholders<(typeof CLIENT_ERRORS)[K]['text']>] extends [never]
  ? []
  : [Readonly<Record<Placeholders<(typeof CLIENT_ERRORS)[K]['text']>, string | number>>];

const PLACEHOLDER = /\{(\w+)\}/g;

/** The text of `key` with its placeholders filled in. */
export function clientText<K extends ClientErrorKey>(key: K, ...params: ClientErrorParams<K>): string {
  const text: string = CLIENT_ERRORS[key].text;
  const values = params[0] as Readonly<Record<string, string | number>> | undefined;
  if (values === undefined) return text;
  return text.replace(PLACEHOLDER, (whole, name: string) => String(values[name] ?? whole));
}

/**
 * An answer to the client, thrown by the layer that decides it (the operation layer, the envelope
 * readers) and written by the binding: its registry entry and its text.
 */
export class ClientError extends Error {
  readonly key: ClientErrorKey;
  readonly status: ClientErrorDef['status'];
  readonly fault: FaultCode | null;

  constructor(key: ClientErrorKey, message: string) {
    super(message);
    this.key = key;
    const def: ClientErrorDef = CLIENT_ERRORS[key];
    this.status = def.status;
    this.fault = def.fault;
  }

  static of<K extends ClientErrorKey>(key: K, ...params: ClientErrorParams<K>): ClientError {
    return new ClientError(key, clientText(key, ...params));
  }
}
