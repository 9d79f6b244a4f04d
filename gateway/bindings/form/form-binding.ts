import { findOperation, httpBindable, operationList, type OperationDef } from '../../../shared/catalogue/index.js';
import { htmlEncode, quotedClientText, type ClrScalarType, type ConversionFailure } from '../../../shared/dotnet/dotnet-convert.js';
import { ClientError, clientText, type ClientErrorKey, type ClientErrorParams } from '../../errors/registry.js';
import { InvalidValueError, MissingParameterError, type DecodedCall, type Today } from '../arguments.js';
import { catalogFormPlans } from './form-argument-decoder.js';
import { BindingCore, sendErrorLine, type BindingCodec, type BindingDeps } from '../core.js';
import { BareResultWriter } from '../result-xml.js';
import { aspNetHtmlEncode } from '../../metadata/xml-escape.js';
import { readBody } from '../../transport/request-body.js';
import type { Exchange } from '../../transport/exchange.js';
import { parseMediaType, TEXT_PLAIN, TEXT_XML } from '../../transport/media-types.js';
import { statusLine } from '../../transport/status.js';
import { FormDecoder, type FormFields } from './form-decoder.js';

/** HTTP-bindable operations by lower-cased name, to tell a name in the wrong case from an unknown one. */
const BY_LOWER_NAME = new Map(operationList.filter(httpBindable).map((op) => [op.name.toLowerCase(), op.name]));

const CLR_TYPE = { int: 'System.Int32', boolean: 'System.Boolean', double: 'System.Double', dateTime: 'System.DateTime' } as const;

/**
 * HTTP GET/POST's part of a call (BindingCore): arguments from form fields, read by the
 * operation's compiled plan (form-argument-decoder.ts), bare XML documents, text errors.
 */
class FormCodec implements BindingCodec<null, FormFields, BareResultWriter> {
  readonly name = 'HTTP';

  decode(op: OperationDef, fields: FormFields, today: Today): DecodedCall {
    return catalogFormPlans.decode(op, fields, today);
  }

  constructor(private readonly namespace: string) {}

  refuse(ex: Exchange, _frame: null, err: unknown): boolean {
    if (err instanceof MissingParameterError) {
      error(ex, err);
      return true;
    }
    if (err instanceof InvalidValueError && err.failure !== null && err.type !== 'string') {
      ex.send(statusLine(err.status), TEXT_PLAIN, conversionFailureText(err.text, CLR_TYPE[err.type], err.failure));
      return true;
    }
    return false;
  }

  writer(op: OperationDef): BareResultWriter {
    return new BareResultWriter(op, this.namespace);
  }

  contentType(): string {
    return TEXT_XML;
  }

  encode(writer: BareResultWriter, _frame: null, result: unknown): string {
    return writer.document(result);
  }

  /** Client or Server, the answer is the same: these bindings have no fault codes. */
  fault(ex: Exchange, _frame: null, err: ClientError): void {
    error(ex, err);
  }
}

/**
 * HTTP GET ({path}/Op?a=b) and HTTP POST form ({path}/Op) bindings. Every failure is HTTP 500
 * `text/plain` with one line ending in CRLF (docs/protocol.md §Errors), except a parameter that
 * does not convert: that gets ASMX's exact two-line text (see conversionFailureText).
 */
export class FormBinding {
  private readonly core: BindingCore<null, FormFields, BareResultWriter>;
  private readonly bodyLimitBytes: number;

  constructor(deps: BindingDeps) {
    this.core = new BindingCore(new FormCodec(deps.config.service.namespace), deps);
    this.bodyLimitBytes = deps.config.service.bodyLimitBytes;
  }

  /** `pathName`: what follows `{path}/`, %-decoded (the operation's name if the client spelt it right). */
  handle(ex: Exchange, pathName: string): void {
    const op = findOperation(pathName);
    const operationName = quotedClientText(pathName);
    ex.binding = ex.method === 'GET' ? 'get' : 'post';
    if (op === undefined || !httpBindable(op)) {
      const intended = BY_LOWER_NAME.get(pathName.toLowerCase());
      // ASMX's texts, HTML-encoded as it writes them; the wrong case is an ArgumentException, whose
      // message ends in a line naming the parameter.
      if (intended === undefined) htmlLine(ex, 'methodNameNotValid', { name: operationName });
      else htmlLine(ex, 'methodNameWrongCase', { name: operationName, intended });
      return;
    }
    // Known before the body is read, so a refused body is counted under its operation.
    ex.operation = op.name;
    if (ex.method === 'GET') {
      this.core.call(ex, null, op, FormDecoder.decodeQuery(ex.query));
      return;
    }
    const media = parseMediaType(ex.header('content-type'));
    if (media.type !== 'application/x-www-form-urlencoded' && !(media.type === '' && op.params.length === 0)) {
      sendErrorLine(ex, 'requestFormatInvalid', { contentType: ex.header('content-type') });
      return;
    }
    const form = new FormDecoder();
    readBody(ex, this.bodyLimitBytes, {
      chunk: (data) => form.push(data),
      end: () => this.core.call(ex, null, op, form.end()),
      tooLarge: () => this.core.tooLarge(ex),
      fail: (err) => this.core.internalError(ex, null, err),
    });
  }
}

/** One line: a message that spans lines (a client's text quoted in it) is joined with spaces. */
function error(ex: Exchange, err: ClientError): void {
  ex.send(statusLine(err.status), TEXT_PLAIN, `${err.message.replace(/[\r\n]+/g, ' ')}\r\n`);
}

/** A registry text HTML-encoded as ASMX writes its HTTP error messages, CRLF kept. */
function htmlLine<K extends ClientErrorKey>(ex: Exchange, key: K, ...params: ClientErrorParams<K>): void {
  const err = ClientError.of(key, ...params);
  ex.send(statusLine(err.status), TEXT_PLAIN, `${aspNetHtmlEncode(err.message)}\r\n`);
}

/**
 * The HTTP 500 text/plain body ASMX writes when a parameter does not convert. ScalarFormatter wraps
 * the failure in ArgumentException("Cannot convert {text} to {type}.", "type", inner), whose message
 * gains "\r\nParameter name: type"; with customErrors on (remote clients, the production default)
 * the messages of the chain are HTML-encoded, joined by " ---> " and written with WriteLine (CRLF).
 * The registry's text holds only ASCII outside its placeholders, so encoding the values alone is
 * encoding each message.
 */
export function conversionFailureText(text: string, type: ClrScalarType, failure: ConversionFailure): string {
  return `${clientText('cannotConvert', { text: htmlEncode(quotedClientText(text)), type, reason: htmlEncode(failure.message) })}\r\n`;
}
