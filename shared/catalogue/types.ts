/**
 * The vocabulary of the operation catalogue. Every operation is described with these
 * declarative shapes; parsing, validation, serialization, the WSDL, the help page and the
 * test client are all driven from them.
 */

/** XML Schema scalar types the service uses. */
export type ScalarType = 'string' | 'int' | 'double' | 'boolean' | 'dateTime';

export interface ScalarField {
  readonly name: string;
  readonly type: ScalarType;
  /** Longest accepted text (strings only). Longer values are an invalid event (-3) or a fault. */
  readonly maxLength?: number;
  /** The element may carry xsi:nil="true" (used for Vehiculo dates never set). */
  readonly nillable?: boolean;
  /**
   * A password: its value never reaches a log line (shared/runtime/logger.ts redacts every secret name) and
   * the help page's test form masks it.
   */
  readonly secret?: boolean;
  /**
   * What `authentication: 'credentials'` reads: the provider's name and its password. Their limits
   * are part of authenticating (over-long credentials are "not authenticated", not "invalid").
   */
  readonly credential?: 'systemUser' | 'password';
}

/** A named complex type (`pEvento`, `Comando`, ...): a sequence of scalar fields. */
export interface ComplexType {
  readonly kind: 'complex';
  readonly name: string;
  readonly fields: readonly ScalarField[];
}

/** `ArrayOfX`: repeated items named after the item type. */
export interface ArrayType {
  readonly kind: 'array';
  readonly name: string;
  readonly item: ComplexType | ScalarType;
}

export type ScalarParam = ScalarField;
export interface ArrayParam {
  readonly name: string;
  readonly type: ArrayType;
  /** Most items accepted; past it the call (or, with `perItem`, each extra item) is invalid. */
  readonly maxItems?: number;
  /**
   * Each item is a separate unit of work (the events of a batch): an item that breaks a limit is
   * answered on its own and the others go ahead. Without it, one bad item makes the call invalid.
   */
  readonly perItem?: boolean;
}
export type Param = ScalarParam | ArrayParam;

/** Result types of the catalogue, by the root element name used in the HTTP bindings. */
export type ResultType =
  | { readonly kind: 'scalar'; readonly name: 'boolean' | 'int'; readonly type: 'boolean' | 'int' }
  | { readonly kind: 'complex'; readonly name: string; readonly type: ComplexType }
  | { readonly kind: 'array'; readonly name: string; readonly type: ArrayType };

/**
 * How an operation identifies the provider. The call pipeline (gateway/service/service.ts)
 * resolves it before the handler runs, and answers `refusals.notAuthenticated` when it cannot.
 */
export type Authentication =
  /** Carries SystemUser and Password (Login, the Login-prefixed family, ConsultarVehiculosEnViaje). */
  | 'credentials'
  /** Uses the session established by an earlier Login (cookie). */
  | 'session'
  /** Logout and InSession manage the session themselves. */
  | 'none';

/**
 * What a caller gets for a call refused before its handler runs: a result value, one value per
 * item of an array parameter (a batch answered item by item), or a Client fault.
 */
export type Answer =
  | { readonly value: boolean | number }
  | { readonly value: number; readonly eachOf: string }
  /** A fault of the error registry (gateway/errors/registry.ts), by key. */
  | { readonly fault: 'invalidCredentials' | 'noSession' | 'unavailable' };

export interface Refusals {
  /** Wrong or over-long credentials, a disabled or locked-out provider, no live session. */
  readonly notAuthenticated: Answer;
  /** A value over its declared limit (maxLength, maxItems). */
  readonly invalid?: Answer;
}

export interface OperationDef {
  readonly name: string;
  /** The operation's purpose; rendered as wsdl:documentation and on the help page. */
  readonly documentation: string;
  readonly params: readonly Param[];
  readonly result: ResultType;
  readonly authentication: Authentication;
  /** Answers of the call pipeline's refusals; required unless authentication is 'none'. */
  readonly refusals?: Refusals;
  /**
   * HTTP GET and POST carry only scalar parameters, so ASMX leaves operations with array
   * parameters out of those bindings. Derived, never declared: see `httpBindable`.
   */
}

export function isArrayParam(p: Param): p is ArrayParam {
  return typeof p.type === 'object';
}

export function httpBindable(op: OperationDef): boolean {
  return op.params.every((p) => !isArrayParam(p));
}

/** The single declaration helper: keeps literal types so handler arguments are derived. */
export function defineOperation<const D extends OperationDef>(def: D): D {
  return def;
}

// ---------------------------------------------------------------------------------------------
// Value types derived from the declarations.

/** A dateTime as received: the text exactly as sent, and its fields when it parsed. */
export interface DateTimeValue {
  readonly text: string;
  /** null when the binding's .NET reader (XmlConvert for SOAP, DateTime.Parse for HTTP) refuses the text: the event is then invalid (-3). */
  readonly parsed: ParsedDateTime | null;
}

export interface ParsedDateTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  /** Fraction of the second in 100 ns ticks (0..9_999_999), the .NET resolution. */
  readonly ticks: number;
  /** Offset from UTC in minutes, or null when the text had none (local time of the provider). */
  readonly offsetMinutes: number | null;
}

export interface ScalarValues {
  /** null when the element was missing (SOAP); '' when a form field was missing (HTTP). */
  string: string | null;
  int: number;
  /** NaN when the text was not a number: event validation turns it into -3. */
  double: number;
  boolean: boolean;
  /** null when missing. */
  dateTime: DateTimeValue | null;
}

/** The value of a complex type's fields, as the bindings decode them. */
export type FieldsValue<F extends readonly ScalarField[]> = {
  [P in F[number] as P['name']]: ScalarValues[P['type']];
};

type ItemValue<I> = I extends ScalarType
  ? ScalarValues[I]
  : I extends ComplexType
    ? FieldsValue<I['fields']>
    : never;

type ParamValue<P> = P extends { type: infer T }
  ? T extends ScalarType
    ? ScalarValues[T]
    : T extends ArrayType
      ? ItemValue<T['item']>[] | null
      : never
  : never;

/** The arguments a handler receives, derived from an operation's parameter list. */
export type ArgsOf<D extends OperationDef> = {
  [P in D['params'][number] as P['name']]: ParamValue<P>;
};

/** Generic argument bag used by binding code before it reaches a typed handler. */
export type ArgumentBag = Record<string, unknown>;
