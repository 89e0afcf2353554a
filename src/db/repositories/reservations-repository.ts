import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, ReservationsTable } from '../database.js';
import type { ReservationKind, ReservationRecord, ReservationsRepository } from './repositories.js';

/** PostgreSQL returns bigint columns as strings. */
function toReservation(row: Selectable<ReservationsTable>): ReservationRecord {
  return {
    id: Number(row.id),
    accountId: Number(row.account_id),
    kind: row.kind as ReservationKind,
    planned: Number(row.planned),
    settled: Number(row.settled),
    server: row.server,
    instance: row.instance,
    leaseUntil: Number(row.lease_until),
    createdAt: Number(row.created_at),
  };
}

/** Row ids per renewing statement. */
const RENEW_SLICE = 500;

export function reservationsRepository(db: Kysely<Database>): ReservationsRepository {
  return {
    async open(row) {
      const inserted = await db
        .insertInto('reservations')
        .values({
          account_id: row.accountId,
          kind: row.kind,
          planned: row.planned,
          settled: 0,
          server: row.server,
          instance: row.instance,
          lease_until: row.leaseUntil,
          created_at: row.createdAt,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(inserted.id);
    },
    async checkpoint(id, settled) {
      const result = await db.updateTable('reservations').set({ settled }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async setPlanned(id, planned) {
      const result = await db.updateTable('reservations').set({ planned }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async renew(ids, leaseUntil) {
      let renewed = 0;
      // In slices: one statement's parameters stay far below either engine's limit.
      for (let start = 0; start < ids.length; start += RENEW_SLICE) {
        const slice = ids.slice(start, start + RENEW_SLICE);
        const result = await db.updateTable('reservations').set({ lease_until: leaseUntil }).where('id', 'in', slice).executeTakeFirst();
        renewed += Number(result.numUpdatedRows);
      }
      return renewed;
    },
    async take(id) {
      // DELETE … RETURNING: on PostgreSQL a second delete of the row waits for the first
      // one's transaction and then finds nothing; on SQLite transactions run one at a time.
      const row = await db.deleteFrom('reservations').where('id', '=', id).returningAll().executeTakeFirst();
      return row ? toReservation(row) : null;
    },
    async abandoned({ server, instance, now, afterId, limit }) {
      const rows = await db
        .selectFrom('reservations')
        .selectAll()
        .where('id', '>', afterId)
        .where((eb) =>
          server === undefined
            ? eb('lease_until', '<', now)
            : eb.or([eb('lease_until', '<', now), eb.and([eb('server', '=', server), eb('instance', '<>', instance)])]),
        )
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toReservation);
    },
    async uploadsInFlight(accountId) {
      const row = await db
        .selectFrom('reservations')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('planned'), sql<number>`0`).as('bytes'))
        .where('account_id', '=', accountId)
        .where('kind', '=', 'upload')
        .executeTakeFirstOrThrow();
      return Number(row.bytes);
    },
    async list(limit) {
      const rows = await db.selectFrom('reservations').selectAll().orderBy('id').limit(limit).execute();
      return rows.map(toReservation);
    },
  };
}
