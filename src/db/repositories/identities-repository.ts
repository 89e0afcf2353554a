import type { Kysely, Selectable } from 'kysely';
import type { AccountIdentitiesTable, Database } from '../database.js';
import type { IdentitiesRepository, LinkedIdentity } from './repositories.js';
import { translateDuplicate } from './rows.js';

const toIdentity = (row: Selectable<AccountIdentitiesTable>): LinkedIdentity => ({
  id: Number(row.id),
  accountId: Number(row.account_id),
  issuer: row.issuer,
  subject: row.subject,
  email: row.email,
  createdAt: Number(row.created_at),
  lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
});

export function identitiesRepository(db: Kysely<Database>): IdentitiesRepository {
  return {
    async link(identity) {
      // One INSERT against the unique (issuer, subject) constraint: of two servers linking
      // the same identity at once, on any engine, exactly one row is written.
      const row = await translateDuplicate(
        db
          .insertInto('account_identities')
          .values({
            account_id: identity.accountId,
            issuer: identity.issuer,
            subject: identity.subject,
            email: identity.email,
            created_at: identity.createdAt,
            last_used_at: identity.createdAt,
          })
          .returningAll()
          .executeTakeFirstOrThrow(),
        'this identity is linked to an account already',
      );
      return toIdentity(row);
    },
    async byIssuerSubject(issuer, subject) {
      const row = await db.selectFrom('account_identities').selectAll().where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
      return row ? toIdentity(row) : null;
    },
    async listForAccount(accountId) {
      const rows = await db.selectFrom('account_identities').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
      return rows.map(toIdentity);
    },
    async unlink(id, accountId) {
      const result = await db.deleteFrom('account_identities').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async touch(id, at) {
      await db.updateTable('account_identities').set({ last_used_at: at }).where('id', '=', id).execute();
    },
  };
}
