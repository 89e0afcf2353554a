import type { Kysely, Selectable } from 'kysely';
import type { Database, SignInChallengesTable } from '../database.js';
import type { SignInChallenge, SignInChallengesRepository } from './repositories.js';
import { translateDuplicate } from './rows.js';

const toChallenge = (row: Selectable<SignInChallengesTable>): SignInChallenge => ({
  id: row.id,
  kind: row.kind,
  accountId: row.account_id === null ? null : Number(row.account_id),
  payload: row.payload,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
});

export function signInChallengesRepository(db: Kysely<Database>): SignInChallengesRepository {
  return {
    async create(challenge) {
      await translateDuplicate(
        db
          .insertInto('sign_in_challenges')
          .values({
            id: challenge.id,
            kind: challenge.kind,
            account_id: challenge.accountId,
            payload: challenge.payload,
            created_at: challenge.createdAt,
            expires_at: challenge.expiresAt,
          })
          .execute(),
        'sign-in challenge id collision',
      );
    },
    async peek(id, kind, now) {
      const row = await db
        .selectFrom('sign_in_challenges')
        .selectAll()
        .where('id', '=', id)
        .where('kind', '=', kind)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row ? toChallenge(row) : null;
    },
    async take(id, kind, now) {
      // One DELETE ... RETURNING: of two requests taking the same challenge (a callback
      // opened twice, on two servers), exactly one gets the row.
      const row = await db.deleteFrom('sign_in_challenges').where('id', '=', id).where('kind', '=', kind).returningAll().executeTakeFirst();
      if (!row || Number(row.expires_at) <= now) return null;
      return toChallenge(row);
    },
    async setPayload(id, payload) {
      const result = await db.updateTable('sign_in_challenges').set({ payload }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async removeExpired(now) {
      const result = await db.deleteFrom('sign_in_challenges').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
