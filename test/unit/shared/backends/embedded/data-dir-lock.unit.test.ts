import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockDataDir, OWNER_FILE } from '../../../../../shared/backends/embedded/data-dir-lock.js';
import { StartError } from '../../../../../shared/runtime/start-error.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'data-dir-lock-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('lockDataDir', () => {
  it('holds DATA_DIR for one store at a time, naming the holder to the next, until released', () => {
    const first = lockDataDir(dir);
    expect(fs.readFileSync(path.join(dir, OWNER_FILE), 'utf8').split('\n')[0]).toBe(String(process.pid));
    let refused: unknown;
    try {
      lockDataDir(dir);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(StartError);
    expect((refused as StartError).setting).toBe('DATA_DIR');
    expect((refused as StartError).message).toMatch(new RegExp(`^DATA_DIR ${dir} is in use by another gateway \\(pid ${process.pid}, started \\d{4}-.*\\): stop it, or set DATA_DIR to another directory$`));
    // The refused attempt did not take the holder's lock away.
    expect(() => lockDataDir(dir)).toThrow(StartError);
    first.release();
    expect(fs.existsSync(path.join(dir, OWNER_FILE))).toBe(false);
    const second = lockDataDir(dir);
    second.release();
    second.release();
  });
});
