import { sessionIdStamp } from '../../domain/session-ids.js';
import { hashSlot, SLOTS, slotTag } from './slots.js';

/**
 * Every key this module writes (layout 2), under one prefix (default `gw:`), each with a hash tag so
 * that Redis Cluster can run every script and transaction on one shard:
 *
 *   {p}{u:<SystemUser>}:…     everything of one provider: its record, lockouts, session index,
 *                             commands, trip, last reports and resend-dedupe claims (one hash slot)
 *   {p}{s:<n>}:session:<id>   a session; the tag is the provider's slot's (slotTag), which the id
 *                             carries in its last three characters, so the session shares the slot
 *   {p}{g:<family>}:…         the cross-provider lists and sequences, one slot a family: the
 *                             providers' list, the lockouts index, NUMERO and its owners, poison
 *                             messages, id-blocks marker (OperatorKeys below adds operators, audit,
 *                             admin guesses)
 *
 * The three tag kinds start differently (`u:`, `s:`, `g:`), so no SystemUser, session id or family
 * can make two keys equal, whatever characters a SystemUser holds (`}` included: it only ends the
 * tag early, the same way for every key of that provider). On one node or under Sentinel the tags
 * change nothing; the layout is the same in every form, so a deployment can move to a cluster by
 * copying its keys. Layout 1 (no tags) is moved over by layout.ts.
 */
export const KEY_LAYOUT = 2;

export class RedisKeys {
  constructor(readonly prefix: string) {
    // A brace in the prefix would become the hash tag of every key.
    if (/[{}]/.test(prefix)) throw new RangeError(`The Redis key prefix must not contain { or }, got "${prefix}".`);
  }

  // ---- one provider's slot -------------------------------------------------------------------
  private user(systemUser: string): string {
    return `${this.prefix}{u:${systemUser}}:`;
  }

  /** Hash of one provider. */
  provider(systemUser: string): string {
    return `${this.user(systemUser)}provider`;
  }
  /** The hash slot of every key of this provider. */
  providerSlot(systemUser: string): number {
    return hashSlot(this.provider(systemUser));
  }

  /** Hash of one SystemUser's failed logins and locks (see lockouts.ts for its fields). */
  lockout(systemUser: string): string {
    return `${this.user(systemUser)}lockout`;
  }

  /** Sorted set of one SystemUser's session ids, score = expiresAt (ending them all). */
  sessionIndex(systemUser: string): string {
    return `${this.user(systemUser)}sessions`;
  }
  /** The session index key is `<before>` + SystemUser + `<after>` (scripts build it from a session's user). */
  sessionIndexParts(): { before: string; after: string } {
    return { before: `${this.prefix}{u:`, after: '}:sessions' };
  }

  /** Sorted sets of the provider's unfinished commands (score numero; score expiresAt) and of all of them (score numero). */
  commandsOpen(systemUser: string): string {
    return `${this.user(systemUser)}commands:open`;
  }
  commandsExpiry(systemUser: string): string {
    return `${this.user(systemUser)}commands:expiry`;
  }
  commandsAll(systemUser: string): string {
    return `${this.user(systemUser)}commands:all`;
  }
  /** Prefix of the provider's command hashes, `…:command:{numero}` (scripts add the numero). */
  commandPrefix(systemUser: string): string {
    return `${this.user(systemUser)}command:`;
  }
  command(systemUser: string, numero: number): string {
    return `${this.commandPrefix(systemUser)}${numero}`;
  }
  /** List of JSON history entries of one command. */
  commandHistory(systemUser: string, numero: number): string {
    return `${this.command(systemUser, numero)}:history`;
  }

  /** Hash dominio → JSON {nroSerie, registeredAt} of the provider's active trip. */
  trip(systemUser: string): string {
    return `${this.user(systemUser)}trip`;
  }
  /** Sorted set of the trip's Dominios, all score 0: lexical order (UTF-8 bytes) for paging. */
  tripIndex(systemUser: string): string {
    return `${this.user(systemUser)}tripidx`;
  }
  /** Hash dominio → "epochMs:subMsTicks" of the provider's latest events. */
  lastReports(systemUser: string): string {
    return `${this.user(systemUser)}lastreport`;
  }

  /** String: the first event id of a resent-event identity, with PX = dedupe window. */
  dedupe(systemUser: string, key: string): string {
    return `${this.user(systemUser)}dedupe:${key}`;
  }

  // ---- sessions: the provider's slot, found from the id ----------------------------------------
  /** String: JSON {"u": systemUser, "e": expiresAt}, in the slot the id carries. */
  session(id: string): string {
    return `${this.sessionPrefixOfSlot(sessionIdStamp(id) % SLOTS)}${id}`;
  }
  private sessionPrefixOfSlot(slot: number): string {
    return `${this.prefix}{${slotTag(slot)}}:session:`;
  }

  // ---- cross-provider families, one slot each --------------------------------------------------
  /** Set of every SystemUser (for list()). */
  providers(): string {
    return `${this.prefix}{g:providers}:all`;
  }
  /** Sorted set of SystemUsers with a lock, score = latest lock end (operators' list). */
  lockoutIndex(): string {
    return `${this.prefix}{g:lockouts}:index`;
  }
  /** Counter of NUMERO (one sequence across providers). */
  commandSeq(): string {
    return `${this.prefix}{g:commands}:seq`;
  }
  /** Hash numero → SystemUser: whose command a NUMERO is (paging every provider's commands). */
  commandOwners(): string {
    return `${this.prefix}{g:commands}:owners`;
  }
  /** Hash id → JSON of the messages the worker set aside; and its index, score = when. */
  poison(): string {
    return `${this.prefix}{g:poison}:messages`;
  }
  poisonIndex(): string {
    return `${this.prefix}{g:poison}:index`;
  }
  /**
   * String: the Kafka topic id of the id-blocks topic some gateway already checked against the
   * stored ids (ids/allocator.ts). Only spares the next start that check: lost with Redis, it is redone.
   */
  idBlocksChecked(): string {
    return `${this.prefix}{g:ids}:blocks-checked`;
  }
  /** String: the key layout the data is in (KEY_LAYOUT), written when a deployment starts on it or moves to it. */
  layout(): string {
    return `${this.prefix}{g:layout}:version`;
  }
  /** String with PX: held by the process moving data to this layout. */
  layoutLock(): string {
    return `${this.prefix}{g:layout}:lock`;
  }
}

/**
 * Keys of the admin API's own state, under the deployment's prefix, each family in a hash slot of
 * its own (tags `g:…`, which no family of keys.ts uses), so that its scripts run on one shard:
 *   {p}{g:operators}:token:{name}        hash: role, tokenHash, createdAt, createdBy, expiresAt?, lastUsedAt?
 *   {p}{g:operators}:token-hash:{sha256} string: the name (a request finds its token by the hash)
 *   {p}{g:operators}:tokens              set of names
 *   {p}{g:audit}:…                       the audit trail (audit.ts)
 *   {p}{g:admin-guesses}:{address}       wrong tokens of one address (admin-lockouts.ts)
 */
export class OperatorKeys {
  constructor(readonly prefix: string) {}
  tokenPrefix(): string {
    return `${this.prefix}{g:operators}:token:`;
  }
  token(name: string): string {
    return `${this.tokenPrefix()}${name}`;
  }
  tokenHashPrefix(): string {
    return `${this.prefix}{g:operators}:token-hash:`;
  }
  tokenByHash(hash: string): string {
    return `${this.tokenHashPrefix()}${hash}`;
  }
  tokens(): string {
    return `${this.prefix}{g:operators}:tokens`;
  }
  audit(part: string): string {
    return `${this.prefix}{g:audit}:${part}`;
  }
  guess(address: string): string {
    return `${this.prefix}{g:admin-guesses}:${address}`;
  }
}
