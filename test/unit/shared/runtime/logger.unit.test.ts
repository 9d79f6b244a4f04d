import { describe, expect, it } from 'vitest';
import { createLogger, prettyLogs } from '../../../../shared/runtime/logger.js';

/** The top-level keys of a JSON object line, in order, duplicates kept (JSON.parse would collapse them). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      let j = i + 1;
      while (line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      if (depth === 1 && line[j + 1] === ':') keys.push(JSON.parse(line.slice(i, j + 1)) as string);
      i = j;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

function capture(): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, logger: createLogger('info', 'gateway', { destination: { write: (line: string) => void lines.push(line) } }) };
}

describe('createLogger', () => {
  it('writes each key once when a child binds a key its parent bound (the audit trail under the admin server)', () => {
    const { lines, logger } = capture();
    logger.child({ component: 'admin' }).child({ component: 'audit', trail: 1 }).info({ route: 'POST /admin/tokens' }, 'recorded');
    const keys = topLevelKeys(lines[0]!);
    expect(keys.filter((k) => k === 'component')).toEqual(['component']);
    expect(new Set(keys).size).toBe(keys.length);
    expect(JSON.parse(lines[0]!)).toMatchObject({ component: 'audit', trail: 1, route: 'POST /admin/tokens', msg: 'recorded' });
  });

  it('keeps a parent binding its child does not repeat', () => {
    const { lines, logger } = capture();
    logger.child({ component: 'admin' }).child({ requestId: 'r1' }).warn('slow');
    expect(JSON.parse(lines[0]!)).toMatchObject({ component: 'admin', requestId: 'r1', msg: 'slow' });
    expect(topLevelKeys(lines[0]!).filter((k) => k === 'component')).toHaveLength(1);
  });

  it('still redacts passwords', () => {
    const { lines, logger } = capture();
    logger.child({ component: 'admin' }).info({ password: 'secret-1', body: { Password: 'secret-2' } }, 'x');
    expect(lines[0]).not.toMatch(/secret-/);
  });
});

describe('LOG_FORMAT', () => {
  it('auto is pretty on a terminal and JSON otherwise; json and pretty are what they say', () => {
    expect(prettyLogs('auto', true)).toBe(true);
    expect(prettyLogs('auto', false)).toBe(false);
    expect(prettyLogs('json', true)).toBe(false);
    expect(prettyLogs('pretty', false)).toBe(true);
  });
});
