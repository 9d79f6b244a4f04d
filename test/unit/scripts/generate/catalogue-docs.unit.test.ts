/** An operation or a parameter added to the catalogue reaches docs/protocol.md's §Interface and §Limits by itself. */
import { describe, expect, it } from 'vitest';
import { interfaceTable, limitsTable } from '../../../../scripts/generate/catalogue-docs.js';
import { CREDENTIALS, defineOperation, operationList, refusals, results } from '../../../../shared/catalogue/index.js';

// Made-up names no real operation will take, and counts from the catalogue: the test holds when one is added.
const MadeUpClock = defineOperation({ name: 'MadeUpClock', documentation: 'The time.', authentication: 'none', params: [], result: results.int });
const MadeUpReport = defineOperation({
  name: 'MadeUpReport',
  documentation: 'A report.',
  authentication: 'credentials',
  refusals: refusals.boolean,
  params: [...CREDENTIALS, { name: 'Texto', type: 'string', maxLength: 500 }, { name: 'Nivel', type: 'int' }, { name: 'Grados', type: 'double' }],
  result: results.boolean,
});

describe('docs/protocol.md tables', () => {
  it('§Interface: a new operation is a row in declaration order, its count and the doubles named', () => {
    const text = interfaceTable([...operationList, MadeUpClock, MadeUpReport]);
    expect(text).toMatch(new RegExp(`^${operationList.length + 2} operations`));
    const rows = text.split('\n').filter((l) => l.startsWith('| '));
    expect(rows.slice(-2)).toEqual(['| MadeUpClock | — | int | — |', '| MadeUpReport | SystemUser, Password, Texto, Nivel: int, Grados | boolean | credentials |']);
    expect(text).toContain('Velocidad, Rumbo and Grados, which are doubles');
    expect(interfaceTable()).toMatch(new RegExp(`^${operationList.length} operations`));
  });

  it('§Limits: a new text parameter with a limit is a row; one without a limit is none', () => {
    const rows = limitsTable([...operationList, MadeUpReport]).split('\n');
    expect(rows.at(-1)).toBe('| Texto | 500 |');
    expect(rows).toHaveLength(limitsTable().split('\n').length + 1);
    expect(limitsTable()).toContain('| Dominio | 32 |');
    expect(limitsTable()).not.toContain('pEvento.Dominio');
  });
});
