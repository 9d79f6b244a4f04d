import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { StartError } from '../../runtime/start-error.js';
import { privateDataFile } from './database.js';

/** The lock file: an empty SQLite database whose exclusive lock the gateway holds while it runs. */
export const LOCK_FILE = 'gateway.lock';
/** Who holds it, for the message another process gives: pid and start time, one per line. */
export const OWNER_FILE = 'gateway.owner';

export interface DataDirLock {
  release(): void;
}

/**
 * One process per DATA_DIR: two gateways on one database would each keep their own sessions,
 * dedupe window and id sequence. The lock is SQLite's own (an fcntl lock on DATA_DIR/gateway.lock,
 * held in exclusive locking mode): the kernel drops it when the process ends, however it ends, so
 * a gateway killed with SIGKILL leaves nothing that blocks the next start. Another process finding
 * it held gets a StartError naming DATA_DIR. SQLite tracks its locks per process too, so a second
 * store opened on the same directory inside one process is refused alike.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = privateDataFile(dataDir, LOCK_FILE);
  const db = new Database(file, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
    throw new StartError('DATA_DIR', `DATA_DIR ${dataDir} is in use by another gateway${ownerOf(dataDir)}: stop it, or set DATA_DIR to another directory`, { cause: err });
  }
  const owner = path.join(dataDir, OWNER_FILE);
  fs.writeFileSync(owner, `${process.pid}\n${new Date().toISOString()}\n`, { mode: 0o600 });
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      fs.rmSync(owner, { force: true });
      db.close();
    },
  };
}

/** " (pid 1234, started …)" from the owner file, when it is there and readable. */
function ownerOf(dataDir: string): string {
  try {
    const [pid, started] = fs.readFileSync(path.join(dataDir, OWNER_FILE), 'utf8').split('\n');
    return pid ? ` (pid ${pid}${started ? `, started ${started}` : ''})` : '';
  } catch {
    return '';
  }
}
