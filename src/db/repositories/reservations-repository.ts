import { type Kysely, type Selectable, sql } from 'kysely';
import { definedQuery } from '../compiled-query.js';
import type { Database, ReservationsTable } from '../database.js';
import type { Engine } from '../dialect.js';
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

// An upload opens a row, and its file's transaction takes it; a first reservation reads
// the account's volume: compiled once, not per transaction (issue 28).
const openReservation = definedQuery(
  [1, 'kind', 2, 'server', 'instance', 3, 4],
  (db: Kysely<Database>, accountId: number, kind: string, planned: number, server: string, instance: string, leaseUntil: number, createdAt: number) =>
    db
      .insertInto('reservations')
      .values({
        account_id: accountId,
        kind,
        planned,
        settled: sql.lit(0),
        server,
        instance,
        lease_until: leaseUntil,
        created_at: createdAt,
      })
      .returning('id'),
);
const takeReservation = definedQuery([1], (db: Kysely<Database>, id: number) => db.deleteFrom('reservations').where('id', '=', id).returningAll());
const volumeInUse = definedQuery([1, 2, 3, 'upload'], (db: Kysely<Database>, accountId: number, since: number, sameAccountId: number, kind: string) => {
  const stored = db
    .selectFrom('upload_log')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('bytes'), sql<number>`0`).as('bytes'))
    .where('account_id', '=', accountId)
    .where('at', '>=', since);
  const inFlight = db
    .selectFrom('reservations')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('planned'), sql<number>`0`).as('bytes'))
    .where('account_id', '=', sameAccountId)
    .where('kind', '=', kind);
  // One statement: one snapshot (PostgreSQL's READ COMMITTED takes one per statement).
  return db.selectNoFrom((eb) => eb(stored, '+', inFlight).as('bytes'));
});

/** Row ids per renewing statement. */
const RENEW_SLICE = 500;

export function reservationsRepository(db: Kysely<Database>, engine: Engine): ReservationsRepository {
  return {
    async open(row) {
      const [inserted] = await openReservation(db, row.accountId, row.kind, row.planned, row.server, row.instance, row.leaseUntil, row.createdAt);
      return Number(inserted!.id);
    },
    async checkpoint(id, settled) {
      const write = async (on: Kysely<Database>) =>
        Number((await on.updateTable('reservations').set({ settled }).where('id', '=', id).executeTakeFirst()).numUpdatedRows) === 1;
      if (engine !== 'sqlite' || db.isTransaction) return write(db);
      // Without the fsync of a FULL commit: better-sqlite3 commits on the main thread, and a
      // download at disk speed checkpoints every 4 MiB, so each fsync stalled every transfer
      // (issue 9: direct links ran 0.7 to 0.8 times as fast as public ones). A checkpoint
      // only bounds a refund after a crash: a process killed keeps it (the WAL write is in
      // the kernel's cache, and the next FULL commit makes it durable); only a power cut may
      // lose it, and then the refund is the larger one, in the user's favour. The connection
      // is held throughout, so no other statement commits with NORMAL.
      return db.connection().execute(async (connection) => {
        await sql`pragma synchronous = normal`.execute(connection);
        try {
          return await write(connection);
        } finally {
          await sql`pragma synchronous = full`.execute(connection);
        }
      });
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
      const [row] = await takeReservation(db, id);
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
    async volumeInUse(accountId, since) {
      const [row] = await volumeInUse(db, accountId, since, accountId, 'upload');
      // PostgreSQL returns bigint sums as strings.
      return Number(row!.bytes);
    },
    async list(limit) {
      const rows = await db.selectFrom('reservations').selectAll().orderBy('id').limit(limit).execute();
      return rows.map(toReservation);
    },
  };
}
