// @ts-check
/**
 * The event log's writer thread (writer-thread.ts starts it): its own SQLite connection, one
 * transaction per group. Groups arrive as binary records in a shared ring (writer-ring.ts
 * describes it); this thread decodes each record straight into the INSERT's parameters with the
 * reader the main thread generated from EVENT_FIELDS (shared/events/binary.ts) and answers each
 * message with a small { seq, ok } reply. Plain CommonJS so that node starts it as it is under the
 * compiled build, tsx and vitest, with no TypeScript loader to register in the thread first.
 *
 * The thread has nothing to do between messages, so it sleeps in Atomics.wait on the published
 * count (no spinning, no event loop turn per message).
 */
const { Buffer } = require('node:buffer');
const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
const Database = require('better-sqlite3');
const { prefaultYoungGeneration } = require('../../runtime/warm-start.cjs');

// This thread's young generation, faulted in before its first group (warm-start.cjs).
prefaultYoungGeneration();

/** @type {import('./writer-thread.js').WriterThreadData} */
const options = workerData;
if (parentPort === null) throw new Error('writer-thread-main.cjs runs as a worker thread only');
const port = parentPort;
const { message: MESSAGE, control: CONTROL, controlBytes, headerBytes } = options.layout;

const db = new Database(options.file);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${options.synchronous}`);
db.pragma('busy_timeout = 5000');
// Statements of 1 … n rows, prepared when first needed, each with its own parameter array.
/** @type {({ insert: import('better-sqlite3').Statement, values: unknown[] } | undefined)[]} */
const byRows = [];
const chunkRows = options.insertRowsSql.length;
function chunkOf(/** @type {number} */ rows) {
  let chunk = byRows[rows];
  if (chunk === undefined) {
    const sql = options.insertRowsSql[rows - 1];
    if (sql === undefined) throw new Error(`no INSERT of ${rows} rows`);
    chunk = { insert: db.prepare(sql), values: [] };
    byRows[rows] = chunk;
  }
  return chunk;
}
const upsert = db.prepare(options.upsertSql);
const probe = db.prepare(options.probeSql);

/** @type {(buf: Buffer) => import('../../events/binary.js').BinaryReader} */
const makeReader = new Function(`return ${options.readerSource};`)();
const { buffer, capacity } = options.ring;
const control = new Int32Array(buffer, 0, controlBytes / 4);
const ringView = new DataView(buffer, controlBytes, capacity);
const ring = makeReader(Buffer.from(buffer, controlBytes, capacity));

/** Inserts a write message's events and last reports; `reader.pos` is at its body. */
const write = db.transaction((/** @type {import('../../events/binary.js').BinaryReader} */ reader, /** @type {number} */ count) => {
  const storedAt = reader.f64();
  for (let left = count; left > 0; ) {
    const rows = left < chunkRows ? left : chunkRows;
    const { insert, values } = chunkOf(rows);
    let at = 0;
    for (let i = 0; i < rows; i++) at = reader.rowInto(storedAt, values, at);
    // As arguments, not one array: better-sqlite3 reads an array element by element through
    // V8's generic property lookup, measurably slower per row (bench/LOG.md 2026-11-26).
    insert.run(...values);
    left -= rows;
  }
  const reports = reader.u32();
  for (let i = 0; i < reports; i++) upsert.run(reader.text(), reader.text(), reader.f64(), reader.u16());
});

/** Runs one message whose header starts at `start` of `reader`'s buffer. */
function handle(/** @type {import('../../events/binary.js').BinaryReader} */ reader, /** @type {DataView} */ view, /** @type {number} */ start) {
  const size = view.getUint32(start, true);
  const type = view.getUint32(start + 4, true);
  const count = view.getUint32(start + 12, true);
  reader.at(start + headerBytes, start + size);
  if (type === MESSAGE.write) write(reader, count);
  else if (type === MESSAGE.probe) probe.run(reader.f64(), reader.u32());
  else if (type === MESSAGE.external) {
    const body = receiveMessageOnPort(options.bodies);
    if (body === undefined) throw new Error('external event group missing');
    const own = Buffer.from(/** @type {ArrayBuffer} */ (body.message));
    handle(makeReader(own), new DataView(own.buffer, own.byteOffset, own.byteLength), 0);
  } else throw new Error(`unknown writer message type ${type}`);
}

let consumed = 0;
let readPos = 0;
for (;;) {
  // Sleeps until the main thread publishes; returns at once when it already has.
  Atomics.wait(control, CONTROL.published, consumed);
  if (Atomics.load(control, CONTROL.published) === consumed) continue;
  const size = ringView.getUint32(readPos, true);
  const type = ringView.getUint32(readPos + 4, true);
  const seq = ringView.getUint32(readPos + 8, true);
  /** @type {{ seq: number, ok: boolean, error?: string } | null} */
  let reply = null;
  if (type !== MESSAGE.wrap && type !== MESSAGE.close) {
    try {
      handle(ring, ringView, readPos);
      reply = { seq, ok: true };
    } catch (error) {
      reply = { seq, ok: false, error: error instanceof Error ? error.message : String(error) };
    }
  }
  // Done with the bytes: free them before answering, so the answer finds the space.
  readPos = readPos + size === capacity ? 0 : readPos + size;
  consumed = (consumed + 1) | 0;
  Atomics.sub(control, CONTROL.used, size);
  Atomics.store(control, CONTROL.consumed, consumed);
  Atomics.notify(control, CONTROL.consumed);
  if (reply !== null) port.postMessage(reply);
  if (type === MESSAGE.close) break;
}
db.close();
options.bodies.close();
port.close();
