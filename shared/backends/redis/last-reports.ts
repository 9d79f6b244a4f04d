import { Cluster, type Redis } from 'ioredis';
import type { EventInstant } from '../types.js';
import type { LastReportSink, LastReportUpdate } from '../scale-out-types.js';
import { decimal, LuaScript, type Guard, type RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';

/*
 * The worker's FechaUltimoReporte: each provider's `lastreport` hash (keys.ts), dominio →
 * "epochMs:subMsTicks", only ever moved forward. A worker batch holds the events of thousands of
 * providers: one script call per provider would cost each side a call per event, so the updates go
 * in as few calls as the form allows: one a chunk on one node; in a cluster, one a chunk per node,
 * the script reaching every provider's hash held there (allow-cross-slot-keys: keys of several
 * slots, on the node the script runs on). A slot that moved meanwhile fails its node's call, which is
 * done again once the client has the cluster's new layout.
 */

/** Moves `hash`'s `d` to ms:tk when later than what it holds (a corrupt stored value is replaced). */
const RECORD_ONE = `local function record(hash, d, ms, tk)
  local later = true
  local cur = redis.call('HGET', hash, d)
  if cur then
    local sep = string.find(cur, ':', 1, true)
    if sep then
      local cms, ctk = tonumber(string.sub(cur, 1, sep - 1)), tonumber(string.sub(cur, sep + 1))
      if cms and ctk then
        local nms, ntk = tonumber(ms), tonumber(tk)
        later = nms > cms or (nms == cms and ntk > ctk)
      end
    end
  end
  if later then redis.call('HSET', hash, d, ms .. ':' .. tk) end
end`;

/** KEYS: one last-report hash per update (all of one slot in a cluster). ARGV: dominio, epochMs, subMsTicks per update. */
export const LAST_REPORT_RECORD = new LuaScript(
  'last-report-record',
  `${RECORD_ONE}
for i = 1, #KEYS do record(KEYS[i], ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i]) end
return #KEYS`,
);

/**
 * No KEYS (run on the cluster node that holds them). ARGV: hash, dominio, epochMs, subMsTicks per
 * update. A hash of a slot this node does not serve fails the call (after the updates before it).
 */
export const LAST_REPORT_RECORD_ON_NODE = new LuaScript(
  'last-report-record-on-node',
  `#!lua flags=allow-cross-slot-keys
${RECORD_ONE}
for i = 1, #ARGV, 4 do record(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]) end
return #ARGV / 4`,
);

/** Updates per script call: keeps each script run short; the calls are pipelined. */
const RECORD_CHUNK = 500;

function isLater(a: EventInstant, b: EventInstant): boolean {
  return a.epochMs > b.epochMs || (a.epochMs === b.epochMs && a.subMsTicks > b.subMsTicks);
}

function validInstant(at: EventInstant): boolean {
  return Number.isSafeInteger(at.epochMs) && Number.isInteger(at.subMsTicks) && at.subMsTicks >= 0 && at.subMsTicks <= 9999;
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string | number): T[][] {
  const groups = new Map<string | number, T[]>();
  for (const item of items) {
    const k = keyOf(item);
    const group = groups.get(k);
    if (group === undefined) groups.set(k, [item]);
    else group.push(item);
  }
  return [...groups.values()];
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += RECORD_CHUNK) out.push(items.slice(i, i + RECORD_CHUNK));
  return out;
}

export function createRedisLastReportSink(redis: RedisClient, keys: RedisKeys, guard: Guard): LastReportSink {
  const bySlot = (updates: readonly LastReportUpdate[]): Promise<unknown> =>
    Promise.all(
      groupBy(updates, (u) => keys.providerSlot(u.systemUser)).flatMap((slot) =>
        chunks(slot).map((chunk) =>
          LAST_REPORT_RECORD.run(
            redis,
            chunk.map((u) => keys.lastReports(u.systemUser)),
            chunk.flatMap((u) => [u.dominio, decimal(u.at.epochMs), decimal(u.at.subMsTicks)]),
          ),
        ),
      ),
    );

  /**
   * In a cluster: one call a chunk per primary, straight to it. A call that fails (a slot moved, a
   * primary replaced) is done again once the client has asked the cluster for its layout, and if
   * that fails too, slot by slot. Forward-only writes: updates a failed call made already are
   * harmless to make again.
   */
  const byNode = (cluster: Cluster, updates: readonly LastReportUpdate[], again = true): Promise<unknown> => {
    const primaries = new Map<string, Redis>(cluster.nodes('master').map((n) => [`${n.options.host}:${n.options.port}`, n]));
    const nodeOf = (u: LastReportUpdate): string => cluster.slots[keys.providerSlot(u.systemUser)]?.[0] ?? '?';
    return Promise.all(
      groupBy(updates, nodeOf).flatMap((group) => {
        const node = primaries.get(nodeOf(group[0]!));
        return chunks(group).map(async (chunk) => {
          try {
            if (node === undefined) throw new Error('no primary known for these slots');
            await LAST_REPORT_RECORD_ON_NODE.run(node, [], chunk.flatMap((u) => [keys.lastReports(u.systemUser), u.dominio, decimal(u.at.epochMs), decimal(u.at.subMsTicks)]));
          } catch {
            if (!again) return bySlot(chunk);
            await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
            return byNode(cluster, chunk, false);
          }
        });
      }),
    );
  };

  return {
    record(updates: readonly LastReportUpdate[]) {
      return guard('lastReports.record', async () => {
        // The latest instant per provider and Dominio first, so a burst from one vehicle is one write.
        const latest = new Map<string, LastReportUpdate>();
        for (const u of updates) {
          if (!validInstant(u.at)) throw new RangeError(`Invalid last report instant for ${u.systemUser}/${u.dominio}.`);
          // The length prefix makes the pair unambiguous whatever characters either part holds.
          const id = `${u.systemUser.length}:${u.systemUser}${u.dominio}`;
          const current = latest.get(id);
          if (current === undefined || isLater(u.at, current.at)) latest.set(id, u);
        }
        const all = [...latest.values()];
        // Issued together: one round trip per shard in all.
        if (redis instanceof Cluster) await byNode(redis, all);
        else
          await Promise.all(
            chunks(all).map((chunk) =>
              LAST_REPORT_RECORD.run(
                redis,
                chunk.map((u) => keys.lastReports(u.systemUser)),
                chunk.flatMap((u) => [u.dominio, decimal(u.at.epochMs), decimal(u.at.subMsTicks)]),
              ),
            ),
          );
      });
    },
  };
}
