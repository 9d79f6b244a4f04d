import proxyaddr from 'proxy-addr';
import { findOperation, type OperationDef } from '../../shared/catalogue/index.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { decodeSoapArguments, InvalidValueError, todayIn } from '../bindings/arguments.js';
import { SoapResultWriter } from '../bindings/result-xml.js';
import { InvalidEncodingError, UnsupportedCharsetError } from '../http/body-decoder.js';
import { parseMediaType, readBody, readCookie, Status, type Exchange, type ProxyTrust, type RejectReason } from '../http/exchange.js';
import type { CallContext } from '../service/context.js';
import { ServiceFault } from '../service/context.js';
import type { OperationService } from '../service/service.js';
import { EnvelopeError, XmlSyntaxError, type SoapEnvelope, type SoapVersion } from './envelope-reader.js';
import { ScannerPool, SoapBodyReader } from './scanner/body-reader.js';
import { envelope, faultEnvelope, SOAP_CONTENT_TYPE, type FaultCode } from './envelope-writer.js';

const SOAP_MEDIA_TYPES = new Set(['text/xml', 'application/soap+xml', 'application/xml']);

/**
 * SOAP 1.1 and 1.2 over POST {service path}. The body streams into a pooled envelope scanner
 * (UTF-8 bytes; other charsets are decoded first, see SoapBodyReader); the call is routed by
 * SOAPAction, else the Content-Type action parameter, else the first Body element
 * (docs/protocol.md §Routing), and answered in the envelope's version.
 */
export class SoapBinding {
  private readonly scanners = new ScannerPool();
  private readonly trust: ProxyTrust;
  private readonly writers = new Map<string, SoapResultWriter>();

  constructor(
    private readonly service: OperationService,
    private readonly config: Config,
    private readonly logger: Logger,
    private readonly clock: () => number,
    private readonly cookieHeader: (sessionId: string) => string,
    /** Counts a request refused while reading it (docs/protocol.md §Encodings). */
    private readonly rejected: (reason: RejectReason) => void = () => undefined,
  ) {
    this.trust = proxyaddr.compile(config.trustedProxies);
  }

  handle(ex: Exchange): void {
    const media = parseMediaType(ex.header('content-type'));
    if (!SOAP_MEDIA_TYPES.has(media.type)) {
      unsupportedMediaType(ex, media.type);
      return;
    }
    // Until the Envelope is read, answer errors in the version the Content-Type suggests.
    const guessedVersion: SoapVersion = media.type === 'application/soap+xml' ? '1.2' : '1.1';
    ex.binding = guessedVersion === '1.2' ? 'soap12' : 'soap11';
    let body: SoapBodyReader;
    try {
      body = new SoapBodyReader(media.params.get('charset') ?? null, this.scanners);
    } catch (err) {
      if (err instanceof UnsupportedCharsetError) {
        this.rejected('unknown_charset');
        unsupportedMediaType(ex, media.type);
        return;
      }
      throw err;
    }
    const action: Action = { header: cleanAction(ex.header('soapaction')), contentType: cleanAction(media.params.get('action') ?? null) };
    const sessionId = readCookie(ex.header('cookie'), this.config.sessionCookieName);

    readBody(ex, this.config.bodyLimitBytes, {
      chunk: (data, last) => body.push(data, last),
      end: () => {
        const env = body.end();
        this.dispatch(ex, env, action, sessionId).catch((err: unknown) => this.internalError(ex, env.version, err));
      },
      tooLarge: () => this.tooLarge(ex),
      fail: (err) => this.readFailed(ex, guessedVersion, err),
    });
  }

  /**
   * The operation a call names, or the fault text when it names none. A SOAPAction header must name
   * the Body's operation; a Content-Type action is tried first and then the Body element (ASMX's
   * SOAP 1.2 routing); without either, the Body element decides. Texts are ASMX's.
   */
  private route(action: Action, bodyName: string | null): OperationDef | string {
    if (action.header !== null) {
      const op = findOperation(this.operationNameOf(action.header));
      if (op === undefined || (bodyName !== null && bodyName !== op.name)) {
        return `Server did not recognize the value of HTTP Header SOAPAction: ${action.header}.`;
      }
      return op;
    }
    const byBody = bodyName === null ? undefined : findOperation(bodyName);
    if (action.contentType !== null) {
      const op = findOperation(this.operationNameOf(action.contentType));
      if (op !== undefined && (bodyName === null || bodyName === op.name)) return op;
      if (op !== undefined) return `Server did not recognize the value of HTTP Header SOAPAction: ${action.contentType}.`;
      return byBody ?? `Unable to handle request. The action '${action.contentType}' was not recognized.`;
    }
    return byBody ?? 'Unable to handle request without a valid action parameter. Please supply a valid soap action.';
  }

  private async dispatch(ex: Exchange, env: SoapEnvelope, action: Action, sessionId: string | null): Promise<void> {
    ex.binding = env.version === '1.2' ? 'soap12' : 'soap11';
    const op = this.route(action, env.operation?.name ?? null);
    if (typeof op === 'string') {
      this.fault(ex, env.version, 'Client', op);
      return;
    }

    ex.operation = op.name;
    let decoded;
    try {
      decoded = decodeSoapArguments(op, env.operation?.children ?? [], todayIn(this.config.timeZone, this.clock));
    } catch (err) {
      if (err instanceof InvalidValueError) {
        this.fault(ex, env.version, 'Client', `Server was unable to read request. ---> ${err.message}`);
        return;
      }
      throw err;
    }

    const ctx: CallContext = {
      operation: op.name,
      now: this.clock(),
      sessionId,
      extras: decoded.extras,
      clientAddress: () => ex.clientAddress(this.trust),
      newSessionId: null,
    };
    let result: unknown;
    try {
      result = await this.service.invoke(op, decoded.args, ctx);
    } catch (err) {
      if (err instanceof ServiceFault) {
        this.fault(ex, env.version, err.code, err.message);
        return;
      }
      throw err;
    }
    const headers: [string, string][] | undefined = ctx.newSessionId === null ? undefined : [['Set-Cookie', this.cookieHeader(ctx.newSessionId)]];
    ex.send(Status.ok, SOAP_CONTENT_TYPE[env.version], envelope(env.version, this.writer(op).body(result)), headers);
  }

  /** `"http://tempuri.org/Login"` → `Login`: the configured namespace, else the last path segment. */
  private operationNameOf(action: string): string {
    if (action.startsWith(this.config.namespace)) return action.slice(this.config.namespace.length);
    return action.slice(action.lastIndexOf('/') + 1);
  }

  private writer(op: OperationDef): SoapResultWriter {
    let w = this.writers.get(op.name);
    if (w === undefined) {
      w = new SoapResultWriter(op, this.config.namespace);
      this.writers.set(op.name, w);
    }
    return w;
  }

  private fault(ex: Exchange, version: SoapVersion, code: FaultCode, message: string, status: string = Status.serverError): void {
    ex.send(status, SOAP_CONTENT_TYPE[version], faultEnvelope(version, code, message));
  }

  private tooLarge(ex: Exchange): void {
    ex.send(Status.tooLarge, 'text/plain; charset=utf-8', `Request body exceeds the limit of ${this.config.bodyLimitBytes} bytes.\r\n`);
  }

  private readFailed(ex: Exchange, version: SoapVersion, err: unknown): void {
    if (err instanceof UnsupportedCharsetError) {
      // Named in the XML declaration: found only once the body arrived.
      this.rejected('unknown_charset');
      unsupportedMediaType(ex, parseMediaType(ex.header('content-type')).type);
    } else if (err instanceof InvalidEncodingError) {
      this.rejected('invalid_encoding');
      this.fault(ex, version, 'Client', `Server was unable to read request. ---> There is an error in the XML document: ${err.message}`, Status.badRequest);
    } else if (err instanceof XmlSyntaxError) {
      this.fault(ex, version, 'Client', `Server was unable to read request. ---> There is an error in the XML document: ${err.message}`, Status.badRequest);
    } else if (err instanceof EnvelopeError) {
      this.fault(ex, version, err.kind, err.message);
    } else this.internalError(ex, version, err);
  }

  private internalError(ex: Exchange, version: SoapVersion, err: unknown): void {
    this.logger.error({ err }, 'SOAP request failed');
    this.fault(ex, version, 'Server', 'Server was unable to process request. ---> An internal error occurred.');
  }
}

/** Where a call names its operation: the SOAPAction header, and the `action` of a SOAP 1.2 Content-Type. */
interface Action {
  readonly header: string | null;
  readonly contentType: string | null;
}

/**
 * 415 with an empty body, as ASMX answers an unsupported media type. Its Content-Type is that of
 * the SOAP version ASMX guesses before reading the envelope: 1.2 when the request has no SOAPAction
 * or is `application/soap+xml`, else 1.1.
 */
function unsupportedMediaType(ex: Exchange, mediaType: string): void {
  const guessed: SoapVersion = ex.header('soapaction') === '' || mediaType === 'application/soap+xml' ? '1.2' : '1.1';
  ex.send(Status.unsupportedMediaType, SOAP_CONTENT_TYPE[guessed], '');
}

/** SOAPAction value without quotes and URL-escapes; null when absent or empty. */
function cleanAction(raw: string | null): string | null {
  if (raw === null) return null;
  let v = raw.trim();
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).trim();
  if (v === '') return null;
  if (!v.includes('%')) return v;
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}
