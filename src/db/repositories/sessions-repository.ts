import type { Kysely, Selectable } from 'kysely';
import type { Database, SessionsTable } from '../database.js';
import type { SessionRecord, SessionsRepository } from './repositories.js';
import { translateDuplicate } from './rows.js';

// PostgreSQL drivers return bigint columns as strings; Number() keeps the mapper dialect-neutral.
const toSession = (row: Selectable<SessionsTable>): SessionRecord => ({
  id: row.id,
  accountId: Number(row.account_id),
  csrfSecret: row.csrf_secret,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  lastSeenAt: Number(row.last_seen_at),
});

export function sessionsRepository(db: Kysely<Database>): SessionsRepository {
  return {
    async create(session) {
      await translateDuplicate(
        db
          .insertInto('sessions')
          .values({
            id: session.id,
            account_id: session.accountId,
            csrf_secret: session.csrfSecret,
            created_at: session.createdAt,
            expires_at: session.expiresAt,
            last_seen_at: session.lastSeenAt,
          })
          .execute(),
        'session id collision',
      );
    },
    async byId(id) {
      const row = await db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toSession(row) : null;
    },
    async touch(id, lastSeenAt, expiresAt) {
      await db.updateTable('sessions').set({ last_seen_at: lastSeenAt, expires_at: expiresAt }).where('id', '=', id).execute();
    },
    async remove(id) {
      const result = await db.deleteFrom('sessions').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async removeForAccount(accountId) {
      const result = await db.deleteFrom('sessions').where('account_id', '=', accountId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async removeExpired(now) {
      const result = await db.deleteFrom('sessions').where('expires_at', '<', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
