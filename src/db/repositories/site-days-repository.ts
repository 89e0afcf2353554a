import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { SiteDay, SiteDaysRepository } from './repositories.js';

export function siteDaysRepository(db: Kysely<Database>): SiteDaysRepository {
  return {
    async between(from, to) {
      const rows = await db.selectFrom('site_days').selectAll().where('day', '>=', from).where('day', '<=', to).orderBy('day').execute();
      // PostgreSQL returns bigint columns as strings.
      return rows.map((r) => ({
        day: Number(r.day),
        uploads: Number(r.uploads),
        uploadedBytes: Number(r.uploaded_bytes),
        fileBytes: Number(r.file_bytes),
        storedBytes: Number(r.stored_bytes),
      }));
    },
    async keep(day: SiteDay) {
      // Servers computing the same finished day compute the same figures: the first kept wins.
      await db
        .insertInto('site_days')
        .values({
          day: day.day,
          uploads: day.uploads,
          uploaded_bytes: day.uploadedBytes,
          file_bytes: day.fileBytes,
          stored_bytes: day.storedBytes,
        })
        .onConflict((conflict) => conflict.column('day').doNothing())
        .execute();
    },
  };
}
