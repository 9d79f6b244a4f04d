/**
 * Every key this module writes, under one prefix (default `gw:`). Each family has its own fixed
 * literal segment, so a SystemUser, session id, Dominio or dedupe key (any text, ':' included)
 * cannot make two families collide.
 *
 * The layout targets a standalone Redis (or Sentinel-managed primary): several Lua scripts touch keys
 * of different providers' families and build command keys inside the script, which Redis Cluster
 * would refuse (it needs every key of a script in one hash slot).
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  /** Hash of one provider. */
  provider(systemUser: string): string {
    return `${this.prefix}provider:${systemUser}`;
  }
  /** Set of every SystemUser (for list()). */
  providers(): string {
    return `${this.prefix}providers`;
  }

  /** Hash of one SystemUser's failed logins and locks (see lockouts.ts for its fields). */
  lockout(systemUser: string): string {
    return `${this.prefix}lockout:${systemUser}`;
  }
  /** Sorted set of SystemUsers with a lock, score = latest lock end (operators' list). */
  lockoutIndex(): string {
    return `${this.prefix}lockouts`;
  }

  /** String: JSON {"u": systemUser, "e": expiresAt}. */
  session(id: string): string {
    return `${this.prefix}session:${id}`;
  }
  /** Prefix of the per-SystemUser session indexes, `{prefix}sessions:{systemUser}` (built inside scripts). */
  sessionIndexPrefix(): string {
    return `${this.prefix}sessions:`;
  }
  /** Sorted set of one SystemUser's session ids, score = expiresAt (ending them all). */
  sessionIndex(systemUser: string): string {
    return `${this.sessionIndexPrefix()}${systemUser}`;
  }

  /** Hash id → JSON of the messages the worker set aside; and its index, score = when. */
  poison(): string {
    return `${this.prefix}poison`;
  }
  poisonIndex(): string {
    return `${this.prefix}poison:index`;
  }

  /** Counter of NUMERO. */
  commandSeq(): string {
    return `${this.prefix}command:seq`;
  }
  /** Prefix of the per-command keys, `{prefix}command:{numero}`; numero is all digits. */
  commandPrefix(): string {
    return `${this.prefix}command:`;
  }
  command(numero: number): string {
    return `${this.commandPrefix()}${numero}`;
  }
  /** List of JSON history entries of one command. */
  commandHistory(numero: number): string {
    return `${this.command(numero)}:history`;
  }
  /** Sorted set of the provider's unfinished commands, score = numero. */
  commandsOpen(systemUser: string): string {
    return `${this.prefix}commands:open:${systemUser}`;
  }
  /** Sorted set of the provider's unfinished commands, score = expiresAt. */
  commandsExpiry(systemUser: string): string {
    return `${this.prefix}commands:expiry:${systemUser}`;
  }
  /** Sorted set of all the provider's commands, score = numero (for list()). */
  commandsAll(systemUser: string): string {
    return `${this.prefix}commands:all:${systemUser}`;
  }

  /** Hash dominio → JSON {nroSerie, registeredAt} of the provider's active trip. */
  trip(systemUser: string): string {
    return `${this.prefix}trip:${systemUser}`;
  }
  /** Sorted set of the trip's Dominios, all score 0: lexical order (UTF-8 bytes) for paging. */
  tripIndex(systemUser: string): string {
    return `${this.prefix}tripidx:${systemUser}`;
  }
  /** Hash dominio → "epochMs:subMsTicks" of the provider's latest events. */
  lastReports(systemUser: string): string {
    return `${this.prefix}lastreport:${systemUser}`;
  }

  /**
   * String: the Kafka topic id of the id-blocks topic some gateway already checked against the
   * stored ids (ids/allocator.ts). Only spares the next start that check: lost with Redis, it is redone.
   */
  idBlocksChecked(): string {
    return `${this.prefix}event:id-blocks-checked`;
  }
  /** String: the first event id of a resent-event identity, with PX = dedupe window. */
  dedupe(key: string): string {
    return `${this.prefix}dedupe:${key}`;
  }
}
