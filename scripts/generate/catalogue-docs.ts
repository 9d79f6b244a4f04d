/**
 * docs/protocol.md's tables of the operation catalogue (shared/catalogue/): §Interface, every
 * operation with its parameters, result and how it identifies the provider, and §Limits, the
 * longest text each element accepts.
 */
import { httpBindable, isArrayParam, operationList, type ComplexType, type OperationDef, type Param, type ScalarField } from '../../shared/catalogue/index.js';
import { markdownTable } from './text.js';

export const CATALOGUE_SOURCE = 'shared/catalogue/';

/** Types a parameter cell leaves unmarked: strings, and the doubles and dateTimes the sentence below the table names. */
const UNMARKED = new Set(['string', 'double', 'dateTime']);

const paramCell = (p: Param): string => (isArrayParam(p) ? `${p.name}: ${p.type.name}` : UNMARKED.has(p.type) ? p.name : `${p.name}: ${p.type}`);

const IDENTIFIED_BY = { credentials: 'credentials', session: 'the session', none: '—' } as const;

/** The scalar parameters of every operation of `type`, in declaration order, once each by name. */
function scalarsOfType(operations: readonly OperationDef[], type: ScalarField['type']): string[] {
  const names = operations.flatMap((op) => op.params.filter((p): p is ScalarField => !isArrayParam(p) && p.type === type).map((p) => p.name));
  return [...new Set(names)];
}

const list = (names: readonly string[]): string => (names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`);

/** §Interface: the count, the table, and which unmarked parameters are not strings. */
export function interfaceTable(operations: readonly OperationDef[] = operationList): string {
  const rows = operations.map((op) => [
    `${op.name}${httpBindable(op) ? '' : ' (SOAP only)'}`,
    op.params.length === 0 ? '—' : op.params.map(paramCell).join(', '),
    op.result.name,
    IDENTIFIED_BY[op.authentication],
  ]);
  return [
    `${operations.length} operations, in the catalogue's declaration order (the deployed service's, the order of its WSDL, then any added since):`,
    '',
    markdownTable(['Operation', 'Parameters, in order', 'Result', 'Provider identified by'], rows),
    '',
    `Parameters without a type are strings, but for ${list(scalarsOfType(operations, 'double'))}, which are doubles, and ${list(scalarsOfType(operations, 'dateTime'))}, which are dateTimes. ` +
      'An operation that identifies no provider (—) answers about the request itself (Logout, InSession).',
  ].join('\n');
}

interface Limit {
  label: string;
  longest: number;
}

/** Every string element with a declared limit, in catalogue order; an array's item count too. */
function limits(operations: readonly OperationDef[]): Limit[] {
  const found: Limit[] = [];
  const add = (label: string, longest: number | undefined): void => {
    if (longest !== undefined && !found.some((l) => l.label === label)) found.push({ label, longest });
  };
  const fieldsOf = (type: ComplexType, suffix = ''): void => {
    for (const f of type.fields) add(`${type.name}.${f.name}${suffix}`, f.maxLength);
  };
  for (const op of operations) {
    for (const p of op.params) {
      if (!isArrayParam(p)) add(p.name, p.maxLength);
      else {
        if (p.maxItems !== undefined) add(`${p.name} (items)`, p.maxItems);
        if (typeof p.type.item !== 'string') fieldsOf(p.type.item);
      }
    }
    if (op.result.kind === 'complex') fieldsOf(op.result.type, ' (set by operators)');
  }
  // An item field of the same name and limit as a parameter is that parameter (pEvento.Dominio is Dominio).
  return found.filter((l) => {
    const bare = /^\w+\.(\w+)$/.exec(l.label)?.[1];
    return bare === undefined || !found.some((o) => o.label === bare && o.longest === l.longest);
  });
}

/** §Limits: the longest text (or most items) each element accepts. */
export function limitsTable(operations: readonly OperationDef[] = operationList): string {
  return markdownTable(['value', 'longest'], limits(operations).map((l) => [l.label, String(l.longest)]), ['left', 'right']);
}
