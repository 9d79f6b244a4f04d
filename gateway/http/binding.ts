import proxyaddr from 'proxy-addr';
import { findOperation, httpBindable, operationList, type OperationDef } from '../../shared/catalogue/index.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { asmxConversionFault, quotedClientText } from '../../shared/xsd/dotnet-convert.js';
import { decodeFormArguments, InvalidValueError, MissingParameterError, todayIn } from '../bindings/arguments.js';
import { BareResultWriter } from '../bindings/result-xml.js';
import { aspNetHtmlEncode } from '../metadata/xml-escape.js';
import type { CallContext } from '../service/context.js';
import { ServiceFault } from '../service/context.js';
import type { OperationService } from '../service/service.js';
import { parseMediaType, readBody, readCookie, Status, TEXT_PLAIN, TEXT_XML, type Exchange, type ProxyTrust } from './exchange.js';
import { FormDecoder, type FormFields } from './form-decoder.js';

/** HTTP-bindable operations by lower-cased name, to tell a name in the wrong case from an unknown one. */
const BY_LOWER_NAME = new Map(operationList.filter(httpBindable).map((op) => [op.name.toLowerCase(), op.name]));

const CLR_TYPE = { int: 'System.Int32', boolean: 'System.Boolean', double: 'System.Double', dateTime: 'System.DateTime' } as const;

/**
 * HTTP GET ({path}/Op?a=b) and HTTP POST form ({path}/Op) bindings. Every failure is HTTP 500
 * `text/plain` with one line ending in CRLF (docs/protocol.md §Errors), except a parameter that
 * does not convert: that gets ASMX's exact two-line text (see asmxConversionFault).
 */
export class HttpBinding {
  private readonly trust: ProxyTrust;
  private readonly writers = new Map<string, BareResultWriter>();

  constructor(
    private readonly service: OperationService,
    private readonly config: Config,
    private readonly logger: Logger,
    private readonly clock: () => number,
    private readonly cookieHeader: (sessionId: string) => string,
  ) {
    this.trust = proxyaddr.compile(config.trustedProxies);
  }

  handle(ex: Exchange, pathName: string): void {
    const op = findOperation(pathName);
    const operationName = quotedClientText(pathName);
    ex.binding = ex.method === 'GET' ? 'get' : 'post';
    if (op === undefined || !httpBindable(op)) {
      const intended = BY_LOWER_NAME.get(pathName.toLowerCase());
      // ASMX's texts, HTML-encoded as it writes them; the wrong case is an ArgumentException, whose
      // message ends in a line naming the parameter.
      const message =
        intended === undefined
          ? `${operationName} Web Service method name is not valid.`
          : `Invalid method name '${operationName}',  method names are case sensitive.   The method name '${intended}' with the same name but different casing was found.\r\nParameter name: methodName`;
      ex.send(Status.serverError, TEXT_PLAIN, `${aspNetHtmlEncode(message)}\r\n`);
      return;
    }
    ex.operation = op.name;
    const sessionId = readCookie(ex.header('cookie'), this.config.sessionCookieName);
    if (ex.method === 'GET') {
      this.call(ex, op, FormDecoder.decodeQuery(ex.query), sessionId);
      return;
    }
    const media = parseMediaType(ex.header('content-type'));
    if (media.type !== 'application/x-www-form-urlencoded' && !(media.type === '' && op.params.length === 0)) {
      this.error(ex, `Request format is invalid: ${ex.header('content-type')}.`);
      return;
    }
    const form = new FormDecoder();
    readBody(ex, this.config.bodyLimitBytes, {
      chunk: (data) => form.push(data),
      end: () => this.call(ex, op, form.end(), sessionId),
      tooLarge: () => ex.send(Status.tooLarge, TEXT_PLAIN, `Request body exceeds the limit of ${this.config.bodyLimitBytes} bytes.\r\n`),
      fail: (err) => this.internalError(ex, err),
    });
  }

  private call(ex: Exchange, op: OperationDef, fields: FormFields, sessionId: string | null): void {
    let decoded;
    try {
      decoded = decodeFormArguments(op, fields, todayIn(this.config.timeZone, this.clock));
    } catch (err) {
      if (err instanceof MissingParameterError) return this.error(ex, err.message);
      if (err instanceof InvalidValueError && err.failure !== null && err.type !== 'string') {
        return ex.send(Status.serverError, TEXT_PLAIN, asmxConversionFault(err.text, CLR_TYPE[err.type], err.failure));
      }
      return this.internalError(ex, err);
    }
    const ctx: CallContext = {
      operation: op.name,
      now: this.clock(),
      sessionId,
      extras: decoded.extras,
      clientAddress: () => ex.clientAddress(this.trust),
      newSessionId: null,
    };
    this.service.invoke(op, decoded.args, ctx).then(
      (result) => {
        const headers: [string, string][] | undefined =
          ctx.newSessionId === null ? undefined : [['Set-Cookie', this.cookieHeader(ctx.newSessionId)]];
        ex.send(Status.ok, TEXT_XML, this.writer(op).document(result), headers);
      },
      (err: unknown) => (err instanceof ServiceFault ? this.error(ex, err.message) : this.internalError(ex, err)),
    );
  }

  private writer(op: OperationDef): BareResultWriter {
    let w = this.writers.get(op.name);
    if (w === undefined) {
      w = new BareResultWriter(op, this.config.namespace);
      this.writers.set(op.name, w);
    }
    return w;
  }

  private error(ex: Exchange, message: string): void {
    ex.send(Status.serverError, TEXT_PLAIN, `${message.replace(/[\r\n]+/g, ' ')}\r\n`);
  }

  private internalError(ex: Exchange, err: unknown): void {
    this.logger.error({ err }, 'HTTP request failed');
    this.error(ex, 'Server was unable to process request. ---> An internal error occurred.');
  }
}
