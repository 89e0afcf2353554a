import { randomUUID } from 'node:crypto';
import type { DavLockRecord, MetadataStore, Repositories } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import type { Account } from '../domain/types.js';
import { type DavPath, davPath, isWithin, parentOf } from './dav-path.js';

/** What a LOCK asks for (RFC 4918 9.10). */
export interface LockRequest {
  path: DavPath;
  exclusive: boolean;
  /** Depth: infinity (a collection and everything under it); else 0. */
  deep: boolean;
  /** The DAV:owner element as XML, '' when none. */
  ownerXml: string;
  /** The timeout asked for, in seconds, already bounded by the caller. */
  timeoutSeconds: number;
}

/** A write a method is about to make, for the lock check. */
export interface WriteTarget {
  path: DavPath;
  /** The write reaches everything under the path too (DELETE or MOVE of a collection, COPY onto one). */
  deep: boolean;
  /**
   * The write adds or removes the name in its parent collection (a new file or folder, a
   * DELETE, a MOVE's source, a COPY or MOVE onto a new name): a lock of depth 0 on the
   * parent protects its members' names too (RFC 4918 7.4), so it counts as well.
   * Absent: false (a PUT or PROPPATCH of a resource that exists).
   */
  member?: boolean;
}

/** A lock stands in the way: 423 Locked, naming the lock's root (RFC 4918 DAV:lock-token-submitted / no-conflicting-lock). */
export class LockedError extends Error {
  constructor(
    /** The paths of the locks in the way (their roots), for the answer's DAV:href. */
    readonly lockRoots: DavPath[],
    /** Whether the write lacked a token (lock-token-submitted) or a new lock conflicts (no-conflicting-lock). */
    readonly condition: 'lock-token-submitted' | 'no-conflicting-lock',
  ) {
    super('The resource is locked');
  }
}

/** The longest lock granted, in seconds: a client that holds a lock longer refreshes it (RFC 4918 6.6). */
export const MAX_LOCK_SECONDS = 3600;
/** The timeout of a LOCK that asks for none (no Timeout header): the longest. */
export const DEFAULT_LOCK_SECONDS = MAX_LOCK_SECONDS;

/** The prefix that makes a stored token (a UUID) the lock token of the wire (RFC 4918 6.5, RFC 4122). */
const TOKEN_PREFIX = 'urn:uuid:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The lock token of a lock as clients see it: "urn:uuid:<uuid>". */
export function lockTokenOf(lock: DavLockRecord): string {
  return `${TOKEN_PREFIX}${lock.token}`;
}

/** The stored token (the UUID) a lock token of the wire names, or null for one this server never hands out. */
export function storedTokenOf(lockToken: string): string | null {
  if (!lockToken.toLowerCase().startsWith(TOKEN_PREFIX)) return null;
  const uuid = lockToken.slice(TOKEN_PREFIX.length).toLowerCase();
  return UUID.test(uuid) ? uuid : null;
}

/** The path a lock is on (its lock root). Stored paths are names joined by "/", and no name holds "/". */
export function lockRootOf(lock: DavLockRecord): DavPath {
  return davPath(lock.path.split('/').filter((name) => name !== ''));
}

/** Whether `lock` covers the resource at `path`: it is on it, or deep on a collection above it (RFC 4918 7). */
export function covers(lock: DavLockRecord, path: DavPath): boolean {
  const root = lockRootOf(lock);
  return lock.path === path.text || (lock.deep && isWithin(path, root));
}

export interface DavLocksDeps {
  store: MetadataStore;
  clock: Clock;
  /** A new lock token's unique part (a random UUID, lower case); injected for tests. */
  newToken?: () => string;
}

/**
 * WebDAV write locks (RFC 4918 6, 7, 9.10, 9.11), kept in the database so every server
 * honours every lock. Each account's tree is its own: a lock of one account never stands
 * in the way of another, and a token of another account opens nothing.
 *
 * Grants are exact under concurrency: the conflict check and the insert run in one
 * transaction that holds `locks.davTree(accountId)`, so of two servers racing for
 * conflicting locks exactly one wins (test/contract/dav-locks.contract.ts).
 */
export class DavLocks {
  constructor(private readonly deps: DavLocksDeps) {}

  /**
   * Grants a new lock, or throws LockedError (no-conflicting-lock) when a lock of the tree
   * overlaps it and either is exclusive (RFC 4918 6.1, 9.10.5). Two locks overlap when one
   * is on the path of the other, or one is deep and the other lies below it.
   */
  async lock(owner: Account, request: LockRequest): Promise<DavLockRecord> {
    const now = this.deps.clock();
    const timeoutSeconds = boundTimeout(request.timeoutSeconds);
    const record: DavLockRecord = {
      token: this.deps.newToken?.() ?? randomUUID(),
      accountId: owner.id,
      path: request.path.text,
      exclusive: request.exclusive,
      deep: request.deep,
      ownerXml: request.ownerXml,
      timeoutSeconds,
      createdAt: now,
      expiresAt: now + timeoutSeconds * 1000,
    };
    return this.deps.store.transaction(async (repos) => {
      // Held to the commit: no other server checks or inserts a lock of this tree meanwhile.
      await repos.locks.davTree(owner.id);
      const near = await repos.davLocks.near(owner.id, request.path.text, now);
      const inTheWay = near.filter((lock) => overlaps(lock, request) && (lock.exclusive || request.exclusive));
      if (inTheWay.length > 0) throw new LockedError(rootsOf(inTheWay), 'no-conflicting-lock');
      await repos.davLocks.create(record);
      return record;
    });
  }

  /**
   * A new timeout for the locks covering `path` whose tokens the request submitted (RFC
   * 4918 9.10.2: a refresh names its lock in the If header; on a member of a deep lock's
   * collection it refreshes that lock). The locks refreshed, none when no submitted token
   * is of a lock covering the path.
   */
  async refresh(owner: Account, path: DavPath, submitted: ReadonlySet<string>, timeoutSeconds: number): Promise<DavLockRecord[]> {
    const now = this.deps.clock();
    const seconds = boundTimeout(timeoutSeconds);
    const expiresAt = now + seconds * 1000;
    const refreshed: DavLockRecord[] = [];
    for (const lock of await this.discover(owner, path)) {
      if (!submitted.has(lockTokenOf(lock))) continue;
      // False: it ended (UNLOCK, expiry) since it was read, and stays ended.
      if (await this.deps.store.davLocks.refresh(lock.token, owner.id, seconds, expiresAt, now)) {
        refreshed.push({ ...lock, timeoutSeconds: seconds, expiresAt });
      }
    }
    return refreshed;
  }

  /**
   * Removes the lock with this token (RFC 4918 9.11) when it is `owner`'s and covers
   * `path`; false otherwise (no such lock, expired, another account's, or one that does
   * not apply to the resource: 409 lock-token-matches-request-uri for the caller).
   */
  async unlock(owner: Account, path: DavPath, lockToken: string): Promise<boolean> {
    const token = storedTokenOf(lockToken);
    if (token === null) return false;
    const lock = await this.deps.store.davLocks.byToken(token, this.deps.clock());
    if (!lock || lock.accountId !== owner.id || !covers(lock, path)) return false;
    return this.deps.store.davLocks.remove(token, owner.id);
  }

  /**
   * The locks that cover `path` (DAV:lockdiscovery, and the lock tokens an If header is
   * evaluated against): on the path itself, and deep ones on the collections above it;
   * oldest first.
   */
  async discover(owner: Account, path: DavPath, repos: Repositories = this.deps.store): Promise<DavLockRecord[]> {
    const near = await repos.davLocks.near(owner.id, path.text, this.deps.clock());
    return near.filter((lock) => covers(lock, path));
  }

  /**
   * Before a write: throws LockedError (lock-token-submitted) unless the request submitted
   * (If header) the token of every lock on the targets: locks covering a target, locks
   * below a deep target, and a depth-0 lock on the parent of a target that changes its
   * parent's members. Only `owner`'s locks exist in its tree, so a token of another
   * account never counts. `repos` lets a caller check inside its own transaction.
   */
  async assertWritable(owner: Account, targets: WriteTarget[], submitted: ReadonlySet<string>, repos: Repositories = this.deps.store): Promise<void> {
    const now = this.deps.clock();
    const missing = new Map<string, DavLockRecord>();
    for (const target of targets) {
      const near = await repos.davLocks.near(owner.id, target.path.text, now);
      const parent = parentOf(target.path);
      for (const lock of near) {
        const applies =
          covers(lock, target.path) ||
          (target.deep && isWithin(lockRootOf(lock), target.path)) ||
          (target.member === true && target.path.names.length > 0 && lock.path === parent.text);
        if (applies && !submitted.has(lockTokenOf(lock))) missing.set(lock.token, lock);
      }
    }
    if (missing.size > 0) throw new LockedError(rootsOf([...missing.values()]), 'lock-token-submitted');
  }

  /** The resource at `path` (and under it) is gone or moved away: its locks go with it. */
  async forget(owner: Account, path: DavPath): Promise<void> {
    await this.deps.store.davLocks.removeUnder(owner.id, path.text);
  }
}

/** A timeout within 1 s .. MAX_LOCK_SECONDS (a whole number of seconds). */
function boundTimeout(seconds: number): number {
  if (!Number.isFinite(seconds)) return MAX_LOCK_SECONDS;
  return Math.min(MAX_LOCK_SECONDS, Math.max(1, Math.floor(seconds)));
}

/** Whether an existing lock and a requested one overlap: the same path, or one deep lock above the other's path. */
function overlaps(lock: DavLockRecord, request: LockRequest): boolean {
  const root = lockRootOf(lock);
  if (lock.path === request.path.text) return true;
  if (lock.deep && isWithin(request.path, root)) return true;
  return request.deep && isWithin(root, request.path);
}

/** The distinct roots of locks, for the answer's hrefs. */
function rootsOf(locks: DavLockRecord[]): DavPath[] {
  const paths = new Map<string, DavPath>();
  for (const lock of locks) paths.set(lock.path, lockRootOf(lock));
  return [...paths.values()];
}
