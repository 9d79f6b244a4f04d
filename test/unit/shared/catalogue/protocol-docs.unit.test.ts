/**
 * What the catalogue declares once, checked where it is repeated for people or derived for code:
 * docs/protocol.md's result-code table, the log redaction of `secret` parameters, and the
 * credential parameters authentication reads. (Its §Interface and §Limits tables are generated from
 * the catalogue: test/unit/scripts/generate/.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  credentialParam,
  operationList,
  ResultCode,
  secretNames,
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
