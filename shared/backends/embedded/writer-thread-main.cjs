// @ts-check
/**
 * The event log's writer thread (writer-thread.ts starts it): its own SQLite connection, one
 * transaction per group of rows. Plain CommonJS so that node starts it as it is under the compiled
 * build, tsx and vitest, with no TypeScript loader to register in the thread first.
 */
const { parentPort, workerData } = require('node:worker_threads');
const Database = require('better-sqlite3');

/** @typedef {string | number | bigint | null} EventRowValue */
/**
 * @typedef {{ type: 'write', seq: number, rows: EventRowValue[][], reports: [string, string, number, number][] }
 *   | { type: 'probe', seq: number, now: number, padBytes: number }
 *   | { type: 'close' }} WriterMessage
 */

/** @type {import('./writer-thread.js').WriterThreadOptions} */
const options = workerData;
if (parentPort === null) throw new Error('writer-thread-main.cjs runs as a worker thread only');
const port = parentPort;

const db = new Database(options.file);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${options.synchronous}`);
db.pragma('busy_timeout = 5000');
const insert = db.prepare(options.insertSql);
const upsert = db.prepare(options.upsertSql);
const probe = db.prepare(options.probeSql);
const write = db.transaction((/** @type {EventRowValue[][]} */ rows, /** @type {unknown[][]} */ reports) => {
  for (const row of rows) insert.run(...row);
  for (const report of reports) upsert.run(...report);
});

port.on('message', (/** @type {WriterMessage} */ message) => {
  if (message.type === 'close') {
    db.close();
    port.close();
    return;
  }
  try {
    if (message.type === 'probe') probe.run(message.now, message.padBytes);
    else write(message.rows, message.reports);
    port.postMessage({ seq: message.seq, ok: true });
  } catch (error) {
    port.postMessage({ seq: message.seq, ok: false, error: error instanceof Error ? error.message : String(error) });
  }
});
