import type { DavLockRecord } from '../../db/repositories/repositories.js';
import { lockTokenOf } from '../../webdav/dav-locks.js';
import { escapeXml } from './dav-xml.js';

/*
 * The XML of locks for answers (RFC 4918 14.1 activelock, 15.8 lockdiscovery, 15.10
 * supportedlock): the LOCK answer and PROPFIND both call these. The "D" prefix is the
 * DAV: namespace, declared by the document they go into.
 */

/**
 * The content of DAV:lockdiscovery for these locks ('' for none), with each lock root's
 * href. The timeout is what is left of each lock at `now` (RFC 4918 14.29), or the one
 * granted when no time is given.
 */
export function lockDiscoveryXml(locks: DavLockRecord[], hrefOf: (lock: DavLockRecord) => string, now?: number): string {
  return locks.map((lock) => activeLockXml(lock, hrefOf(lock), now)).join('');
}

/** One DAV:activelock (RFC 4918 14.1). */
function activeLockXml(lock: DavLockRecord, href: string, now: number | undefined): string {
  const seconds = now === undefined ? lock.timeoutSeconds : Math.max(0, Math.ceil((lock.expiresAt - now) / 1000));
  return (
    '<D:activelock>' +
    '<D:locktype><D:write/></D:locktype>' +
    `<D:lockscope>${lock.exclusive ? '<D:exclusive/>' : '<D:shared/>'}</D:lockscope>` +
    `<D:depth>${lock.deep ? 'infinity' : '0'}</D:depth>` +
    // The client's own DAV:owner element, stored as it came (each element declares its namespace).
    lock.ownerXml +
    `<D:timeout>Second-${seconds}</D:timeout>` +
    `<D:locktoken><D:href>${escapeXml(lockTokenOf(lock))}</D:href></D:locktoken>` +
    `<D:lockroot><D:href>${escapeXml(href)}</D:href></D:lockroot>` +
    '</D:activelock>'
  );
}

/** The content of DAV:supportedlock: exclusive and shared write locks. */
export function supportedLockXml(): string {
  return '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry><D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>';
}
