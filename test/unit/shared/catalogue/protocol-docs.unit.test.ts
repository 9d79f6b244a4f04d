/**
 * What the catalogue declares once, checked where it is repeated for people or derived for code:
 * docs/protocol.md's interface and result-code tables, the log redaction of `secret` parameters,
 * and the credential parameters authentication reads.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  credentialParam,
  httpBindable,
  isArrayParam,
  operationList,
  ResultCode,
  secretNames,
  type Param,
} from '../../../../shared/catalogue/index.js';
import { createLogger } from '../../../../shared/runtime/logger.js';
import { REPO } from '../../../helpers/paths.js';

const ROOT = REPO;
const PROTOCOL = readFileSync(join(ROOT, 'docs/protocol.md'), 'utf8');

function section(heading: string): string {
  const start = PROTOCOL.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/protocol.md has no §${heading}.`);
  const next = PROTOCOL.indexOf('\n## ', start + heading.length + 4);
  return PROTOCOL.slice(start, next < 0 ? undefined : next);
}

/** The cells of every table row of a section, header and separator left out. */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('|---'))
    .slice(1)
    .map((line) => line.slice(2, -2).split(' | '));
}

const typeName = (p: Param): string => (isArrayParam(p) ? p.type.name : p.type);

describe('docs/protocol.md §Interface against the catalogue', () => {
  const interfaceSection = section('Interface');
  const rows = tableRows(interfaceSection.slice(0, interfaceSection.indexOf('\n\nParameters without a type')));
  // "Latitud, Longitud, Altitud, Velocidad and Rumbo are doubles, the two Fecha fields dateTimes"
  const doubles = new Set(/; ([A-Za-z, ]+) are doubles/.exec(interfaceSection)?.[1]?.split(/, | and /) ?? []);

  it('lists every operation in declaration order, SOAP-only exactly where the HTTP bindings cannot carry it', () => {
    expect(rows.map(([name]) => name)).toEqual(operationList.map((op) => `${op.name}${httpBindable(op) ? '' : ' (SOAP only)'}`));
  });

  it("gives each operation's parameters in order, typed as declared (unmarked: a string, or a double or dateTime the text names)", () => {
    expect(doubles.size).toBeGreaterThan(0);
    for (const [i, op] of operationList.entries()) {
      const cell = rows[i]?.[1] ?? '';
      const documented = cell === '—' ? [] : cell.split(', ').map((item) => item.split(': '));
      expect(documented.map(([name]) => name), op.name).toEqual(op.params.map((p) => p.name));
      for (const [j, p] of op.params.entries()) {
        const written = documented[j]?.[1];
        const implied = p.type === 'string' || (p.type === 'double' && doubles.has(p.name)) || (p.type === 'dateTime' && p.name.startsWith('Fecha'));
        if (written === undefined) expect(implied, `${op.name}.${p.name} is ${typeName(p)}: say so`).toBe(true);
        else expect(written, `${op.name}.${p.name}`).toBe(typeName(p));
      }
    }
  });

  it('gives each result and how the provider is identified', () => {
    for (const [i, op] of operationList.entries()) {
      const [, , result, identified] = rows[i] ?? [];
      expect(result, op.name).toBe(op.result.name);
      expect(identified, op.name).toMatch(op.authentication === 'credentials' ? /credentials/ : /the session/);
    }
  });
});

describe('result codes', () => {
  it('docs/protocol.md §Result codes lists exactly the declared codes', () => {
    const codes = tableRows(section('Result codes'))
      .map(([code]) => code ?? '')
      .filter((code) => /^-\d+$/.test(code))
      .map(Number);
    expect(codes.sort()).toEqual(Object.values(ResultCode).sort());
  });
});

describe('secret and credential parameters', () => {
  it('the passwords, and only they, are secret', () => {
    expect([...secretNames].sort()).toEqual(['AntiguaClave', 'NuevaClave', 'Password']);
  });

  it('no secret reaches a log line, at the top of the object or one level down', () => {
    const lines: string[] = [];
    const logger = createLogger('info', 'test', { destination: { write: (line: string) => void lines.push(line) } });
    logger.info({ Password: 'p-top', args: { Password: 'p-nested', NuevaClave: 'n-nested', AntiguaClave: 'a-nested', SystemUser: 'acme' }, password: 'admin-pw' }, 'call');
    const line = lines.join('');
    for (const secret of ['p-top', 'p-nested', 'n-nested', 'a-nested', 'admin-pw']) expect(line).not.toContain(secret);
    expect(line).toContain('acme');
    expect(line).toContain('[redacted]');
  });

  it('every operation that authenticates by credentials declares both, and no other operation does', () => {
    for (const op of operationList) {
      const declared = [credentialParam(op, 'systemUser'), credentialParam(op, 'password')];
      if (op.authentication === 'credentials') expect(declared, op.name).toEqual(['SystemUser', 'Password']);
      else expect(declared, op.name).toEqual([undefined, undefined]);
    }
  });
});
