import type { DavLockRecord, MetadataStore } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import type { Account } from '../domain/types.js';
import type { DavPath } from './dav-path.js';

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

export interface DavLocksDeps {
  store: MetadataStore;
  clock: Clock;
}

/**
 * WebDAV write locks (RFC 4918 6, 9.10, 9.11), kept in the database so every server
 * honours every lock; grants are exact under concurrency (locks.davTree held from the
 * conflict check to the insert). TO BE BUILT (issue 27, locks part).
 */
export class DavLocks {
  constructor(private readonly deps: DavLocksDeps) {}

  /** Grants a new lock, or throws LockedError (no-conflicting-lock). */
  async lock(_owner: Account, _request: LockRequest): Promise<DavLockRecord> {
    void this.deps;
    throw new Error('not built');
  }

  /** Locks whose scope covers `path` (for DAV:lockdiscovery). */
  async discover(_owner: Account, _path: DavPath): Promise<DavLockRecord[]> {
    return [];
  }

  /**
   * Before a write: throws LockedError (lock-token-submitted) unless every lock of another
   * holder on the targets is matched by a token the request submitted (If header) and
   * owned by `owner`.
   */
  async assertWritable(_owner: Account, _targets: WriteTarget[], _submitted: ReadonlySet<string>): Promise<void> {}

  /** The resource at `path` (and under it) is gone or moved away: its locks go with it. */
  async forget(owner: Account, path: DavPath): Promise<void> {
    await this.deps.store.davLocks.removeUnder(owner.id, path.text);
  }
}
