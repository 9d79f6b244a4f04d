import { findOperation, type OperationDef } from '../../../shared/catalogue/index.js';
import type { Config } from '../../../shared/config/index.js';
import { InvalidValueError, type DecodedCall, type Today } from '../arguments.js';
import { BindingCore, type BindingCodec, type BindingDeps } from '../core.js';
import { SoapResultWriter } from '../result-xml.js';
import { InvalidEncodingError, UnsupportedCharsetError } from '../../transport/body-decoder.js';
import { CLIENT_ERRORS, ClientError } from '../../errors/registry.js';
import { readBody, type BodySink } from '../../transport/request-body.js';
import type { Exchange, RejectReason } from '../../transport/exchange.js';
import { parseMediaType } from '../../transport/media-types.js';
import { statusLine } from '../../transport/status.js';
import { EnvelopeError, XmlSyntaxError, type SoapVersion } from './envelope.js';
import { ScannerPool, SoapBodyReader } from './scanner/body-reader.js';
import { CallScanner, type ScannedCall } from './compiled/call-builder.js';
import { catalogPlans, type DecoderRecord } from './compiled/argument-decoder.js';
import { envelope, faultEnvelope, SOAP_CONTENT_TYPE } from './envelope-writer.js';
import { ScalarAnswerBytes } from './answer-bytes.js';

const SOAP_MEDIA_TYPES = new Set(['text/xml', 'application/soap+xml', 'application/xml']);

/** An operation's answers: as bytes when its result is an int or a boolean, else as text. */
interface SoapWriter {
  readonly text: SoapResultWriter;
  readonly bytes: ScalarAnswerBytes | null;
}

/**
 * SOAP's part of a call (BindingCore): arguments from the Body element's slots, read by the
 * operation's compiled plan (compiled/README.md), answers in the envelope's version.
 */
class SoapCodec implements BindingCodec<SoapVersion, DecoderRecord | null, SoapWriter> {
  readonly name = 'SOAP';

  decode(op: OperationDef, record: DecoderRecord | null, today: Today): DecodedCall {
    return catalogPlans.decode(op, record, today);
  }

  constructor(private readonly namespace: string) {}

  refuse(ex: Exchange, version: SoapVersion, err: unknown): boolean {
    if (!(err instanceof InvalidValueError)) return false;
    fault(ex, version, err);
    return true;
  }

  writer(op: OperationDef): SoapWriter {
    const text = new SoapResultWriter(op, this.namespace);
    return { text, bytes: ScalarAnswerBytes.of(op, text) };
  }

  contentType(version: SoapVersion): string {
    return SOAP_CONTENT_TYPE[version];
  }

  encode(writer: SoapWriter, version: SoapVersion, result: unknown): string | Uint8Array {
    return writer.bytes?.render(version, result) ?? envelope(version, writer.text.body(result));
  }

  fault(ex: Exchange, version: SoapVersion, error: ClientError): void {
    fault(ex, version, error);
  }
}

/**
 * SOAP 1.1 and 1.2 over POST {service path}. The body streams into a pooled envelope scanner
 * (UTF-8 bytes; other charsets are decoded first, see SoapBodyReader); the call is routed by
 * SOAPAction, else the Content-Type action parameter, else the first Body element
 * (docs/protocol.md §Routing), and answered in the envelope's version.
 */
export class SoapBinding {
  private readonly scanners = new ScannerPool<ScannedCall>(() => new CallScanner(catalogPlans));
  private readonly core: BindingCore<SoapVersion, DecoderRecord | null, SoapWriter>;

  private readonly config: Config;
  /** Counts a request refused while reading it (docs/protocol.md §Encodings). */
  private readonly rejected: (reason: RejectReason) => void;

  constructor(deps: BindingDeps) {
    this.config = deps.config;
    this.rejected = deps.rejected;
    this.core = new BindingCore(new SoapCodec(deps.config.service.namespace), deps);
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
    let body: SoapBodyReader<ScannedCall>;
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
    const header = cleanAction(ex.header('soapaction'));
    const contentType = cleanAction(media.params.get('action') ?? null);
    readBody(ex, this.config.service.bodyLimitBytes, new SoapRequest(this, ex, body, header, contentType, guessedVersion));
  }

  /** 413 while the body streams in. */
  tooLarge(ex: Exchange): void {
    this.core.tooLarge(ex);
  }

  /**
   * The operation a call names, or the fault when it names none. A SOAPAction header must name
   * the Body's operation; a Content-Type action is tried first and then the Body element (ASMX's
   * SOAP 1.2 routing); without either, the Body element decides.
   */
  private route(action: Action, bodyName: string | null): OperationDef | ClientError {
    if (action.header !== null) {
      const op = findOperation(this.operationNameOf(action.header));
      if (op === undefined || (bodyName !== null && bodyName !== op.name)) return ClientError.of('soapActionNotRecognized', { action: action.header });
      return op;
    }
    const byBody = bodyName === null ? undefined : findOperation(bodyName);
    if (action.contentType !== null) {
      const op = findOperation(this.operationNameOf(action.contentType));
      if (op !== undefined && (bodyName === null || bodyName === op.name)) return op;
      if (op !== undefined) return ClientError.of('soapActionNotRecognized', { action: action.contentType });
      return byBody ?? ClientError.of('actionNotRecognized', { action: action.contentType });
    }
    return byBody ?? ClientError.of('noAction');
  }

  /** From here on errors are answered in the envelope's version, the guessed one no longer. */
  dispatch(ex: Exchange, call: ScannedCall, action: Action): void {
    ex.binding = call.version === '1.2' ? 'soap12' : 'soap11';
    try {
      const op = this.route(action, call.operation);
      if (op instanceof ClientError) fault(ex, call.version, op);
      else this.core.call(ex, call.version, op, call.record);
    } catch (err) {
      this.core.internalError(ex, call.version, err);
    }
  }

  /** `"http://tempuri.org/Login"` → `Login`: the configured namespace, else the last path segment. */
  private operationNameOf(action: string): string {
    if (action.startsWith(this.config.service.namespace)) return action.slice(this.config.service.namespace.length);
    return action.slice(action.lastIndexOf('/') + 1);
  }

  readFailed(ex: Exchange, version: SoapVersion, err: unknown): void {
    if (err instanceof UnsupportedCharsetError) {
      // Named in the XML declaration: found only once the body arrived.
      this.rejected('unknown_charset');
      unsupportedMediaType(ex, parseMediaType(ex.header('content-type')).type);
    } else if (err instanceof InvalidEncodingError || err instanceof XmlSyntaxError) {
      if (err instanceof InvalidEncodingError) this.rejected('invalid_encoding');
      fault(ex, version, ClientError.of('notWellFormed', { detail: err.message }));
    } else if (err instanceof EnvelopeError) {
      fault(ex, version, err);
    } else this.core.internalError(ex, version, err);
  }
}

/**
 * One request's body sink and action: a single object where a record of four closures and an
 * action record were, carrying what the dispatch needs (the exchange, the pooled reader, the
 * action, the guessed version).
 */
class SoapRequest implements BodySink, Action {
  constructor(
    private readonly binding: SoapBinding,
    private readonly ex: Exchange,
    private readonly body: SoapBodyReader<ScannedCall>,
    readonly header: string | null,
    readonly contentType: string | null,
    private readonly guessedVersion: SoapVersion,
  ) {}

  chunk(data: Uint8Array, last: boolean): void {
    this.body.push(data, last);
  }

  end(): void {
    const call = this.body.end();
    try {
      this.binding.dispatch(this.ex, call, this);
    } finally {
      // The call's slots are the scanner's: it is reused only once they are decoded.
      this.body.release();
    }
  }

  tooLarge(): void {
    this.binding.tooLarge(this.ex);
  }

  fail(err: unknown): void {
    this.binding.readFailed(this.ex, this.guessedVersion, err);
  }
}

/** A registry error as a fault in `version`; an entry without a fault code is a Server fault. */
function fault(ex: Exchange, version: SoapVersion, error: ClientError): void {
  ex.send(statusLine(error.status), SOAP_CONTENT_TYPE[version], faultEnvelope(version, error.fault ?? 'Server', error.message));
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
  const { status, text } = CLIENT_ERRORS.unsupportedMediaType;
  ex.send(statusLine(status), SOAP_CONTENT_TYPE[guessed], text);
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
