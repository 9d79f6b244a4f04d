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
function write(/** @type {import('../../events/binary.js').BinaryReader} */ reader, /** @type {number} */ count) {
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
}

/** Runs one message whose header starts at `start` of `reader`'s buffer. */
function handle(/** @type {import('../../events/binary.js').BinaryReader} */ reader, /** @type {DataView} */ view, /** @type {number} */ start) {
  const size = view.getUint32(start, true);
  const type = view.getUint32(start + 4, true);
  const count = view.getUint32(start + 12, true);
  reader.at(start + headerBytes, start + size);
  if (type === MESSAGE.write) write(reader, count);
  else if (type === MESSAGE.probe) probe.run(reader.f64(), reader.u32());
  else if (type === MESSAGE.external) {
    const own = externals.get(start);
    if (own === undefined) throw new Error('external event group missing');
    handle(makeReader(own), new DataView(own.buffer, own.byteOffset, own.byteLength), 0);
  } else throw new Error(`unknown writer message type ${type}`);
}

/**
 * The bodies of the external messages being committed, by their marker's position: received once,
 * before the transaction, since a failed transaction is tried again message by message.
 * @type {Map<number, Buffer>}
 */
const externals = new Map();

/**
 * Group commit: the messages published while the last commit ran go into one transaction, one
 * fsync for all of them (under load the main thread publishes a group per event-loop turn, faster
 * than the disk syncs). If that transaction fails, each message is tried again alone, so a failure
 * is answered to the message that caused it only.
 */
const commitAll = db.transaction((/** @type {number[]} */ starts) => {
  for (const start of starts) handle(ring, ringView, start);
});
const commitOne = db.transaction((/** @type {number} */ start) => handle(ring, ringView, start));

let consumed = 0;
let readPos = 0;
/** @type {number[]} */
const starts = [];
/** @type {number[]} */
const seqs = [];
let closing = false;
while (!closing) {
  // Sleeps until the main thread publishes; returns at once when it already has. `sleeping` tells
  // the main thread to notify (writer-ring.ts publish): set before the wait, cleared after.
  Atomics.store(control, CONTROL.sleeping, 1);
  Atomics.wait(control, CONTROL.published, consumed);
  Atomics.store(control, CONTROL.sleeping, 0);
  const published = Atomics.load(control, CONTROL.published);
  if (published === consumed) continue;
  // Everything published so far, up to a close marker.
  starts.length = 0;
  seqs.length = 0;
  let taken = consumed;
  let pos = readPos;
  let freed = 0;
  while (taken !== published && !closing) {
    const size = ringView.getUint32(pos, true);
    const type = ringView.getUint32(pos + 4, true);
    if (type === MESSAGE.close) closing = true;
    else if (type !== MESSAGE.wrap) {
      if (type === MESSAGE.external) {
        const body = receiveMessageOnPort(options.bodies);
        if (body !== undefined) externals.set(pos, Buffer.from(/** @type {ArrayBuffer} */ (body.message)));
      }
      starts.push(pos);
      seqs.push(ringView.getUint32(pos + 8, true));
    }
    pos = pos + size === capacity ? 0 : pos + size;
    freed += size;
    taken = (taken + 1) | 0;
  }
  /** @type {{ seqs: number[], ok: true } | null} */
  let done = null;
  /** @type {{ seq: number, ok: false, error: string }[]} */
  const failed = [];
  if (starts.length > 0) {
    try {
      commitAll(starts);
      done = { seqs: seqs.slice(), ok: true };
    } catch {
      // One by one, in order: what fails alone is answered as failed, the rest committed.
      /** @type {number[]} */
      const committed = [];
      for (let i = 0; i < starts.length; i++) {
        try {
          commitOne(/** @type {number} */ (starts[i]));
          committed.push(/** @type {number} */ (seqs[i]));
        } catch (error) {
          failed.push({ seq: /** @type {number} */ (seqs[i]), ok: false, error: error instanceof Error ? error.message : String(error) });
        }
      }
      done = { seqs: committed, ok: true };
    }
  }
  externals.clear();
  // Done with the bytes: free them before answering, so the answers find the space.
  readPos = pos;
  consumed = taken;
  Atomics.sub(control, CONTROL.used, freed);
  Atomics.store(control, CONTROL.consumed, consumed);
  Atomics.notify(control, CONTROL.consumed);
  if (done !== null && done.seqs.length > 0) port.postMessage(done);
  for (const reply of failed) port.postMessage(reply);
}
db.close();
options.bodies.close();
port.close();
