import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { ServedDaysRepository } from './repositories.js';

export function servedDaysRepository(db: Kysely<Database>): ServedDaysRepository {
  return {
    async add(day, bytes) {
      if (bytes <= 0) return;
      // One statement: the first download of a day inserts its row, every later one adds to
      // it. The engines' row lock on the key orders concurrent adders (a read-then-write
      // would lose some), on SQLite's single writer and on PostgreSQL alike.
      await db
        .insertInto('served_days')
        .values({ day, bytes })
        .onConflict((conflict) => conflict.column('day').doUpdateSet((eb) => ({ bytes: eb('served_days.bytes', '+', eb.ref('excluded.bytes')) })))
        .execute();
    },
    async between(from, to) {
      const rows = await db.selectFrom('served_days').select(['day', 'bytes']).where('day', '>=', from).where('day', '<=', to).orderBy('day').execute();
      return rows.map((r) => ({ day: Number(r.day), bytes: Number(r.bytes) }));
    },
  };
}
