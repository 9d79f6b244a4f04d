import type { ArgumentBag, ScalarField, ScalarType } from '../../shared/catalogue/index.js';
import { type CivilDate, civilDateIn } from '../../shared/dotnet/calendar.js';
import type { ConversionFailure } from '../../shared/dotnet/dotnet-convert.js';
import { ClientError, clientText } from '../errors/registry.js';

/**
 * What every binding's argument decoder produces (soap/soap-arguments.ts, form/form-arguments.ts):
 * typed handler arguments following the catalogue. Leniency rules (docs/protocol.md §Reading
 * requests): parameters by local name in any order, unknown ones ignored (but kept as `extras`, so
 * an event keeps e.g. a Rumbo its operation lacks), missing ones defaulted. Doubles and dates never
 * fault here: an unreadable one makes the event invalid (-3) later. An unreadable int or boolean is
 * the caller's error.
 */
export interface DecodedCall {
  args: ArgumentBag;
  /** Top-level fields the operation does not declare, by name, as text. */
  extras: ReadonlyMap<string, string>;
}

/** Top-level fields an operation does not declare: none, the common case, shares one map. */
export const NO_EXTRAS: ReadonlyMap<string, string> = Object.freeze(new Map<string, string>());

/** An int or boolean that does not read. SOAP answers it as is; HTTP GET/POST with ASMX's conversion text. */
export class InvalidValueError extends ClientError {
  constructor(
    readonly param: string,
    readonly text: string,
    readonly type: ScalarType,
    /** HTTP GET/POST: how Convert.ChangeType failed, for ASMX's error text. */
    readonly failure: ConversionFailure | null = null,
  ) {
    super('unreadableValue', clientText('unreadableValue', { text, name: param }));
  }
}

/** HTTP GET/POST: a parameter that is not a string is missing. */
export class MissingParameterError extends ClientError {
  constructor(readonly param: string) {
    super('missingParameter', clientText('missingParameter', { name: param }));
  }
}

/** One parameter's reading of its text: a value, or an InvalidValueError for an int or boolean. */
export type Converter = (text: string, today: Today) => unknown;

/** How a binding reads each scalar type's text (the .NET conversions of that binding). */
export interface ScalarReaders {
  readonly string: Converter;
  readonly double: Converter;
  readonly dateTime: Converter;
  /** `name` is the parameter's, for the error. */
  readonly int: (name: string, text: string) => unknown;
  readonly boolean: (name: string, text: string) => unknown;
}

/** The reading of `field` by `readers`, chosen once: what a compiled decoder keeps per parameter. */
export function converterOf(field: ScalarField, readers: ScalarReaders): Converter {
  const name = field.name;
  switch (field.type) {
    case 'string':
      return readers.string;
    case 'double':
      return readers.double;
    case 'dateTime':
      return readers.dateTime;
    case 'int': {
      const read = readers.int;
      return (text) => read(name, text);
    }
    case 'boolean': {
      const read = readers.boolean;
      return (text) => read(name, text);
    }
  }
}


/** DateTime.Now's date, for a value that carries none ("10:00:08", xs:time, "Nov 21"). */
export type Today = () => CivilDate;

/**
 * `todayIn` reused call after call (one per binding, no closure per request): `at(now)` before
 * each decode, which reads the date only if a value needs it.
 */
export class TodayAt {
  private now = 0;
  private date: CivilDate | null = null;
  readonly today: Today = () => (this.date ??= civilDateIn(this.now, this.zone));

  constructor(private readonly zone: string) {}

  at(now: number): Today {
    this.now = now;
    this.date = null;
    return this.today;
  }
}

/** Today's date in `zone`, looked up only if a value needs it. */
export function todayIn(zone: string, clock: () => number): Today {
  let today: CivilDate | undefined;
  return () => (today ??= civilDateIn(clock(), zone));
}
