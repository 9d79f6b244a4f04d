import type { CancelOutcome, Command, CommandHistoryEntry, CommandPageQuery, CommandState, CommandStore, FinishOutcome } from '../types.js';
import type { SqliteDatabase } from './database.js';
import type { StoreAccess } from './store-access.js';

interface CommandRow {
  numero: number;
  system_user: string;
  cmd: string;
  unidad: string;
  equipo: string;
  state: CommandState;
  created_at: number;
  expires_at: number;
  deliveries: number;
  last_delivered_at: number | null;
  finished_at: number | null;
}

interface HistoryRow {
  numero: number;
  at: number;
  kind: CommandHistoryEntry['kind'];
  message: string;
}

function isUnfinished(state: CommandState): boolean {
  return state === 'pending' || state === 'in_process';
}

/** An unfinished command past its expiry is reported as expired, whether or not that was stored yet. */
function effectiveState(row: CommandRow, now: number): CommandState {
  return isUnfinished(row.state) && row.expires_at <= now ? 'expired' : row.state;
}

function toCommand(row: CommandRow, history: CommandHistoryEntry[], now: number): Command {
  return {
    numero: row.numero,
    systemUser: row.system_user,
    cmd: row.cmd,
    unidad: row.unidad,
    equipo: row.equipo,
    state: effectiveState(row, now),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    deliveries: row.deliveries,
    lastDeliveredAt: row.last_delivered_at,
    finishedAt: row.finished_at,
    history,
  };
}

/**
 * Commands and their history in SQLite: durable across restarts (docs/protocol.md §Commands). Every operation
 * that reads and then writes runs in one IMMEDIATE transaction (the write lock is taken first, so
 * another writer can neither slip in between nor make it fail), queued behind event commits.
 */
export function createCommandStore(db: SqliteDatabase, access: StoreAccess): CommandStore {
  const insertCommand = db.prepare<[string, string, string, string, number, number]>(
    `INSERT INTO commands (system_user, cmd, unidad, equipo, state, created_at, expires_at)
     VALUES (?, ?, ?, ?, 'pending', ?, ?)`,
  );
  const insertHistory = db.prepare<[number, number, CommandHistoryEntry['kind'], string]>(
    'INSERT INTO command_history (numero, at, kind, message) VALUES (?, ?, ?, ?)',
  );
  const selectCommand = db.prepare<[number], CommandRow>('SELECT * FROM commands WHERE numero = ?');
  const selectHistory = db.prepare<[number], HistoryRow>(
    'SELECT numero, at, kind, message FROM command_history WHERE numero = ? ORDER BY entry',
  );
  // Stores the expiry of the provider's overdue commands, which takes them out of commands_open.
  const expireOverdue = db.prepare<[string, number]>(
    `UPDATE commands SET state = 'expired'
     WHERE system_user = ? AND state IN ('pending', 'in_process') AND expires_at <= ?`,
  );
  // Oldest by NUMERO: the sequence is the queue order, independent of callers' clocks.
  const selectOldestOpen = db.prepare<[string, number], CommandRow>(
    `SELECT * FROM commands
     WHERE system_user = ? AND state IN ('pending', 'in_process') AND expires_at > ?
     ORDER BY numero LIMIT 1`,
  );
  const markDelivered = db.prepare<[number, number]>(
    'UPDATE commands SET deliveries = deliveries + 1, last_delivered_at = ? WHERE numero = ?',
  );
  const markInProcess = db.prepare<[number]>("UPDATE commands SET state = 'in_process' WHERE numero = ?");
  const markFinished = db.prepare<[CommandState, number, number]>(
    'UPDATE commands SET state = ?, finished_at = ? WHERE numero = ?',
  );
  const selectByProvider = db.prepare<[string], CommandRow>(
    'SELECT * FROM commands WHERE system_user = ? ORDER BY numero',
  );
  const selectHistoryByProvider = db.prepare<[string], HistoryRow>(
    `SELECT h.numero, h.at, h.kind, h.message FROM command_history h
     JOIN commands c ON c.numero = h.numero
     WHERE c.system_user = ? ORDER BY h.numero, h.entry`,
  );

  const markCancelled = db.prepare<[number, number]>("UPDATE commands SET state = 'cancelled', finished_at = ? WHERE numero = ?");
  const selectOpenOf = db.prepare<[string, number], { numero: number }>(
    `SELECT numero FROM commands WHERE system_user = ? AND state IN ('pending', 'in_process') AND expires_at > ?`,
  );

  function historyOf(numero: number): CommandHistoryEntry[] {
    return selectHistory.all(numero).map(({ at, kind, message }) => ({ at, kind, message }));
  }

  function load(numero: number, now: number): Command | null {
    const row = selectCommand.get(numero);
    return row === undefined ? null : toCommand(row, historyOf(numero), now);
  }

  const enqueue = db.transaction((c: { systemUser: string; cmd: string; unidad: string; equipo: string; now: number; expiresAt: number }) => {
    const { lastInsertRowid } = insertCommand.run(c.systemUser, c.cmd, c.unidad, c.equipo, c.now, c.expiresAt);
    const numero = Number(lastInsertRowid);
    insertHistory.run(numero, c.now, 'queued', '');
    return load(numero, c.now);
  });

  const deliverNext = db.transaction((systemUser: string, now: number): Command | null => {
    expireOverdue.run(systemUser, now);
    const row = selectOldestOpen.get(systemUser, now);
    if (row === undefined) return null;
    markDelivered.run(now, row.numero);
    // Only the first delivery goes to the history: a client polls the same command every few
    // seconds until it finishes it, and the count and last time already say the rest.
    if (row.deliveries === 0) insertHistory.run(row.numero, now, 'delivered', '');
    return load(row.numero, now);
  });

  const appendStatus = db.transaction((systemUser: string, numero: number, message: string, now: number): boolean => {
    const row = selectCommand.get(numero);
    if (row === undefined || row.system_user !== systemUser || !isUnfinished(effectiveState(row, now))) return false;
    markInProcess.run(numero);
    insertHistory.run(numero, now, 'status', message);
    return true;
  });

  const finish = db.transaction((systemUser: string, numero: number, succeeded: boolean, now: number): FinishOutcome => {
    const row = selectCommand.get(numero);
    if (row === undefined || row.system_user !== systemUser) return 'rejected';
    const outcome: CommandState = succeeded ? 'succeeded' : 'failed';
    const state = effectiveState(row, now);
    if (isUnfinished(state)) {
      markFinished.run(outcome, now, numero);
      insertHistory.run(numero, now, 'finished', outcome);
      return 'finished';
    }
    // A retried ComandoProcesado whose first answer was lost.
    return state === outcome ? 'already-same' : 'rejected';
  });

  const list = db.transaction((systemUser: string, now: number): Command[] => {
    const histories = new Map<number, CommandHistoryEntry[]>();
    for (const { numero, at, kind, message } of selectHistoryByProvider.all(systemUser)) {
      let entries = histories.get(numero);
      if (entries === undefined) histories.set(numero, (entries = []));
      entries.push({ at, kind, message });
    }
    return selectByProvider.all(systemUser).map((row) => toCommand(row, histories.get(row.numero) ?? [], now));
  });

  /** The provider's command, or undefined. */
  function rowOf(systemUser: string, numero: number): CommandRow | undefined {
    const row = selectCommand.get(numero);
    return row?.system_user === systemUser ? row : undefined;
  }

  function cancelRow(numero: number, now: number): void {
    markCancelled.run(now, numero);
    insertHistory.run(numero, now, 'finished', 'cancelled');
  }

  const cancel = db.transaction((systemUser: string, numero: number, now: number): CancelOutcome | null => {
    const row = rowOf(systemUser, numero);
    if (row === undefined) return null;
    const open = isUnfinished(effectiveState(row, now));
    if (open) cancelRow(numero, now);
    const command = load(numero, now);
    if (command === null) throw new Error(`Command ${numero} vanished inside its transaction.`);
    return { outcome: open ? 'cancelled' : 'not-open', command };
  });

  const cancelAll = db.transaction((systemUser: string, now: number): number => {
    const open = selectOpenOf.all(systemUser, now);
    for (const { numero } of open) cancelRow(numero, now);
    return open.length;
  });

  const page = db.transaction((query: CommandPageQuery, now: number) => {
    const where: string[] = [];
    const params: (string | number)[] = [];
    const add = (clause: string, ...values: (string | number)[]): void => {
      where.push(clause);
      params.push(...values);
    };
    if (query.systemUser !== undefined) add('system_user = ?', query.systemUser);
    if (query.beforeNumero !== undefined) add('numero < ?', query.beforeNumero);
    const state = query.state;
    // The state as reported: an unfinished command past its expiry counts as expired.
    if (state === 'pending' || state === 'in_process') add('state = ? AND expires_at > ?', state, now);
    else if (state === 'expired') add("(state = 'expired' OR (state IN ('pending', 'in_process') AND expires_at <= ?))", now);
    else if (state !== undefined) add('state = ?', state);
    const sql = `SELECT * FROM commands ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY numero DESC LIMIT ?`;
    const rows = db.prepare<(string | number)[], CommandRow>(sql).all(...params, query.limit);
    const commands = rows.map((row) => toCommand(row, historyOf(row.numero), now));
    const last = rows[rows.length - 1];
    return { commands, nextBeforeNumero: rows.length === query.limit && last !== undefined ? last.numero : null };
  });

  return {
    async get(systemUser, numero, now) {
      if (!Number.isSafeInteger(numero) || numero <= 0) return null;
      return access.read(() => {
        const row = rowOf(systemUser, numero);
        return row === undefined ? null : toCommand(row, historyOf(numero), now);
      });
    },
    async cancel(systemUser, numero, now) {
      if (!Number.isSafeInteger(numero) || numero <= 0) return null;
      return access.write(() => cancel.immediate(systemUser, numero, now));
    },
    async cancelAll(systemUser, now) {
      return access.write(() => cancelAll.immediate(systemUser, now));
    },
    async page(query, now) {
      if (!(query.limit >= 1)) return { commands: [], nextBeforeNumero: null };
      return access.read(() => page(query, now));
    },
    async enqueue(command) {
      const stored = await access.write(() => enqueue.immediate(command));
      if (stored === null) throw new Error('Command vanished right after being queued.');
      return stored;
    },
    async deliverNext(systemUser, now) {
      return access.write(() => deliverNext.immediate(systemUser, now));
    },
    async appendStatus(systemUser, numero, message, now) {
      // NUMERO arrives from the wire; anything but a positive integer cannot name a command.
      if (!Number.isSafeInteger(numero) || numero <= 0) return false;
      return access.write(() => appendStatus.immediate(systemUser, numero, message, now));
    },
    async finish(systemUser, numero, succeeded, now) {
      if (!Number.isSafeInteger(numero) || numero <= 0) return 'rejected';
      return access.write(() => finish.immediate(systemUser, numero, succeeded, now));
    },
    async list(systemUser, now) {
      return access.read(() => list(systemUser, now));
    },
  };
}
