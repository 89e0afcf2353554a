import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { SignInAddressesRepository } from './repositories.js';

export function signInAddressesRepository(db: Kysely<Database>): SignInAddressesRepository {
  return {
    async lastSuccess(id) {
      const row = await db.selectFrom('sign_in_addresses').select('last_success_at').where('id', '=', id).executeTakeFirst();
      return row ? Number(row.last_success_at) : null;
    },
    async recordSuccess(id, at) {
      await db
        .insertInto('sign_in_addresses')
        .values({ id, last_success_at: at })
        .onConflict((oc) => oc.column('id').doUpdateSet({ last_success_at: at }))
        .execute();
    },
    async prune(before) {
      const result = await db.deleteFrom('sign_in_addresses').where('last_success_at', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
