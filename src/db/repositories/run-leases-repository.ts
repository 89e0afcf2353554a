import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { RunLeasesRepository } from './repositories.js';

export function runLeasesRepository(db: Kysely<Database>): RunLeasesRepository {
  return {
    async take(name, holder, until, now) {
      // One statement: a missing row is inserted, an expired (or our own) one taken over, a
      // live one of another holder left alone; the engines' row locks on the key decide a
      // race between two takers.
      const result = await db
        .insertInto('run_leases')
        .values({ name, holder, lease_until: until })
        .onConflict((conflict) =>
          conflict
            .column('name')
            .doUpdateSet({ holder, lease_until: until })
            .where((eb) => eb.or([eb('run_leases.lease_until', '<', now), eb('run_leases.holder', '=', holder)])),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    },
    async renew(name, holder, until) {
      const result = await db.updateTable('run_leases').set({ lease_until: until }).where('name', '=', name).where('holder', '=', holder).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async release(name, holder) {
      await db.deleteFrom('run_leases').where('name', '=', name).where('holder', '=', holder).execute();
    },
    async holderOf(name, now) {
      const row = await db.selectFrom('run_leases').select(['holder', 'lease_until']).where('name', '=', name).executeTakeFirst();
      return row && Number(row.lease_until) >= now ? row.holder : null;
    },
  };
}
