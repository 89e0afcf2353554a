import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import type { Database, DavLocksTable } from '../database.js';
import type { DavLockRecord, DavLocksRepository } from './repositories.js';

/** WebDAV locks (migration 0016); the conflict rules are webdav/dav-locks.ts's. */
export function davLocksRepository(db: Kysely<Database>): DavLocksRepository {
  return {
    async near(accountId, path, now) {
      const ancestors = ancestorPaths(path);
      const below = path === '/' ? '/' : `${path}/`;
      const rows = await db
        .selectFrom('dav_locks')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('expires_at', '>', now)
        .where((eb) => {
          const any: Expression<SqlBool>[] = [eb('path', 'in', [path, ...ancestors])];
          // Below: the path starts with "<path>/" (substr, not LIKE: names may hold % and _).
          any.push(sql<SqlBool>`substr(${sql.ref('path')}, 1, ${characters(below)}) = ${below}`);
          return eb.or(any);
        })
        .orderBy('created_at')
        .execute();
      return rows.map(toLock);
    },
    async byToken(token, now) {
      const row = await db.selectFrom('dav_locks').selectAll().where('token', '=', token).where('expires_at', '>', now).executeTakeFirst();
      return row ? toLock(row) : null;
    },
    async create(lock) {
      await db
        .insertInto('dav_locks')
        .values({
          token: lock.token,
          account_id: lock.accountId,
          path: lock.path,
          exclusive: lock.exclusive ? 1 : 0,
          deep: lock.deep ? 1 : 0,
          owner_xml: lock.ownerXml,
          timeout_seconds: lock.timeoutSeconds,
          created_at: lock.createdAt,
          expires_at: lock.expiresAt,
        })
        .execute();
    },
    async refresh(token, accountId, timeoutSeconds, expiresAt, now) {
      const result = await db
        .updateTable('dav_locks')
        .set({ timeout_seconds: timeoutSeconds, expires_at: expiresAt })
        .where('token', '=', token)
        .where('account_id', '=', accountId)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async remove(token, accountId) {
      const result = await db.deleteFrom('dav_locks').where('token', '=', token).where('account_id', '=', accountId).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },
    async removeUnder(accountId, path) {
      const below = path === '/' ? '/' : `${path}/`;
      const result = await db
        .deleteFrom('dav_locks')
        .where('account_id', '=', accountId)
        .where((eb) => eb.or([eb('path', '=', path), sql<SqlBool>`substr(${sql.ref('path')}, 1, ${characters(below)}) = ${below}`]))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async purgeExpired(now) {
      const result = await db.deleteFrom('dav_locks').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/**
 * A text's length as SQL's substr counts it, in characters (code points), on both engines;
 * JavaScript's length counts UTF-16 units, two for an emoji.
 */
function characters(text: string): number {
  return [...text].length;
}

/** "/a/b/c" → ["/", "/a", "/a/b"]; the top has none. */
export function ancestorPaths(path: string): string[] {
  if (path === '/') return [];
  const names = path.split('/').slice(1, -1);
  const out = ['/'];
  let at = '';
  for (const name of names) {
    at += `/${name}`;
    out.push(at);
  }
  return out;
}

function toLock(row: { [K in keyof DavLocksTable]: unknown }): DavLockRecord {
  return {
    token: String(row.token),
    accountId: Number(row.account_id),
    path: String(row.path),
    exclusive: Number(row.exclusive) === 1,
    deep: Number(row.deep) === 1,
    ownerXml: String(row.owner_xml),
    timeoutSeconds: Number(row.timeout_seconds),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}
