/**
 * The embedded schema migration that lets commands be cancelled rebuilds the commands table: an
 * existing database keeps every command, its history and its NUMERO sequence.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_FILE, MIGRATIONS, migrate, SCHEMA_VERSION } from '../../../../../shared/backends/embedded/database.js';
import { openEmbeddedBackends } from '../../../../../shared/backends/embedded/index.js';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A database as the previous release left it: schema version 2, commands with history, the newest one deleted. */
function previousRelease(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cancel-migration-'));
  dirs.push(dir);
  const db = new Database(path.join(dir, DATABASE_FILE));
  db.pragma('foreign_keys = ON');
  db.exec(MIGRATIONS[0]!.sql);
  db.exec(MIGRATIONS[1]!.sql);
  db.pragma('user_version = 2');
  const insert = db.prepare(
    `INSERT INTO commands (system_user, cmd, unidad, equipo, state, created_at, expires_at, deliveries) VALUES (?, 'CC', 'U', 'E', ?, ?, ?, ?)`,
  );
  insert.run('acme', 'succeeded', T0, T0 + 1000, 2);
  insert.run('acme', 'pending', T0, T0 + 86_400_000, 0);
  insert.run('acme', 'pending', T0, T0 + 86_400_000, 0);
  db.prepare(`INSERT INTO command_history (numero, at, kind, message) VALUES (1, ?, 'queued', ''), (1, ?, 'finished', 'succeeded'), (2, ?, 'queued', '')`).run(T0, T0 + 5, T0);
  db.prepare('DELETE FROM commands WHERE numero = 3').run();
  db.close();
  return dir;
}

describe('commands table rebuild (schema version 3)', () => {
  it('keeps commands, history and the NUMERO sequence, and accepts the cancelled state', async () => {
    const dir = previousRelease();
    const b = await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 60_000, offThreadCommits: false });
    try {
      const list = await b.commands.list('acme', T0 + 10);
      expect(list.map((c) => [c.numero, c.state, c.deliveries])).toEqual([
        [1, 'succeeded', 2],
        [2, 'pending', 0],
      ]);
      expect(list[0]?.history.map((h) => h.kind)).toEqual(['queued', 'finished']);
      // 3 was used (then deleted): never handed out again.
      expect((await b.commands.enqueue({ systemUser: 'acme', cmd: 'X', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + 86_400_000 })).numero).toBe(4);
      expect((await b.commands.cancel('acme', 2, T0 + 20))?.command.state).toBe('cancelled');
    } finally {
      await b.close();
    }
    const db = new Database(path.join(dir, DATABASE_FILE), { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(db.pragma('foreign_key_check')).toEqual([]);
      // The history still references the rebuilt table.
      const fk = db.pragma('foreign_key_list(command_history)') as { table: string }[];
      expect(fk.map((f) => f.table)).toEqual(['commands']);
      const indexes = (db.pragma('index_list(commands)') as { name: string }[]).map((i) => i.name).sort();
      expect(indexes).toEqual(['commands_by_provider', 'commands_open']);
    } finally {
      db.close();
    }
  });

  it('refuses to commit a migration that would leave a dangling reference, and changes nothing', () => {
    const dir = previousRelease();
    const db = new Database(path.join(dir, DATABASE_FILE));
    try {
      // History of a command that does not exist (possible only with foreign keys off).
      db.pragma('foreign_keys = OFF');
      db.prepare(`INSERT INTO command_history (numero, at, kind, message) VALUES (42, 0, 'queued', '')`).run();
      db.pragma('foreign_keys = ON');
      expect(() => migrate(db)).toThrow(/dangling reference/);
      expect(db.pragma('user_version', { simple: true })).toBe(2);
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    } finally {
      db.close();
    }
  });
});
