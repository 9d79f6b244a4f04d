import { isInsertTimeout } from '../shared/backends/clickhouse/client.js';
import type { ClickHouseEventWriter } from '../shared/backends/clickhouse/writer.js';
import { backoffDelay, RetryAborted, sleep, type BackoffOptions } from './backoff.js';
import type { BufferedMessage } from './batch.js';

export interface PieceOptions {
  writer: Pick<ClickHouseEventWriter, 'encode' | 'insert'>;
  /** The insert token of a piece (worker/batch.ts batchToken): the same messages, the same token. */
  tokenOf: (messages: readonly BufferedMessage[]) => string;
  backoff: BackoffOptions;
  /** Checked before each attempt: true abandons with RetryAborted. */
  shouldStop: () => boolean;
  wake?: { promise: Promise<void> };
  /** A failed attempt (1-based since the last stored piece), the wait before the next, and whether the piece was split. */
  onFailure: (error: unknown, details: { attempt: number; delayMs: number; rows: number; split: boolean }) => void;
  /** A piece stored: its rows and how long its insert took. */
  onStored: (rows: number, seconds: number) => void;
}

/**
 * Halvings of a batch at most: pieces of a sixteenth. A server that times out whatever the size
 * (stalled, cut off) would otherwise leave a batch of 20,000 in single events when it heals, and
 * 20,000 inserts of one row are 20,000 parts for 18.16 to merge.
 */
const MAX_HALVINGS = 4;

/**
 * Inserts a batch's events, retried with backoff until every one is stored. An attempt that timed
 * out (ClickHouse said nothing for CLICKHOUSE_INSERT_TIMEOUT_MS: on 18.16, a block writing parts
 * into many partitions already holding many parts) is tried again as two halves, in order, each
 * under its own token; a half that times out again is halved again, to a sixteenth of the batch
 * (MAX_HALVINGS), then retried as it is. A
 * smaller block writes fewer parts and answers sooner, so the worker makes progress where a
 * retry of the whole would time out for ever (and the stuck watchdog, seeing no insert succeed
 * while ClickHouse answers, would end the process). 18.16 finishes an insert the client stopped
 * waiting for, so a piece may be stored twice: the table collapses rows with the same id. Other
 * failures (ClickHouse down, refusing a row) retry the piece as it is: splitting would only
 * multiply the inserts, and the parts, once it answers again.
 */
export async function insertInPieces(messages: readonly BufferedMessage[], options: PieceOptions): Promise<void> {
  const pieces: { messages: readonly BufferedMessage[]; halvings: number }[] = [{ messages, halvings: 0 }];
  let attempt = 0;
  let lastError: unknown = null;
  while (pieces.length > 0) {
    const { messages: piece, halvings } = pieces[0]!;
    const decoded = piece.flatMap((m) => (m.decoded === null ? [] : [m.decoded]));
    if (decoded.length === 0) {
      pieces.shift();
      continue;
    }
    if (options.shouldStop()) throw new RetryAborted(lastError);
    const batch = options.writer.encode(decoded, Date.now());
    try {
      const started = performance.now();
      await options.writer.insert(batch, options.tokenOf(piece));
      options.onStored(batch.rows, (performance.now() - started) / 1000);
      pieces.shift();
      attempt = 0;
    } catch (err) {
      lastError = err;
      const split = decoded.length > 1 && halvings < MAX_HALVINGS && isInsertTimeout(err);
      if (split) {
        const half = Math.ceil(piece.length / 2);
        pieces.splice(0, 1, { messages: piece.slice(0, half), halvings: halvings + 1 }, { messages: piece.slice(half), halvings: halvings + 1 });
      }
      const delayMs = backoffDelay(attempt, options.backoff);
      attempt++;
      options.onFailure(err, { attempt, delayMs, rows: batch.rows, split });
      await sleep(delayMs, options.wake?.promise);
    }
  }
}
