import type { DavLockRecord } from '../../db/repositories/repositories.js';

/**
 * The XML of locks for answers (RFC 4918 14.1 activelock, 15.8 lockdiscovery, 15.10
 * supportedlock). TO BE BUILT (issue 27, locks part): the LOCK answer and PROPFIND both
 * call these.
 */

/** The content of DAV:lockdiscovery for these locks ('' for none), with each lock root's href. */
export function lockDiscoveryXml(_locks: DavLockRecord[], _hrefOf: (lock: DavLockRecord) => string): string {
  return '';
}

/** The content of DAV:supportedlock: exclusive and shared write locks. */
export function supportedLockXml(): string {
  return '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry><D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>';
}
