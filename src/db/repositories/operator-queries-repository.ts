import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import { FileStatus } from '../../domain/types.js';
import type { Database } from '../database.js';
import type { Engine } from '../dialect.js';
import type { OperatorQueriesRepository } from './repositories.js';
import { containsText, listedAfter, toAccount, toFile } from './rows.js';
import { toShare } from './shares-repository.js';
import { toRequest } from './upload-requests-repository.js';

const DAY_MS = 86_400_000;

export function operatorQueriesRepository(db: Kysely<Database>, engine: Engine): OperatorQueriesRepository {
  const contains = (column: string, text: string): Expression<SqlBool> => containsText(engine, column, text);

  // Live at `at`: created by then and not yet deleted (blocked files still hold their bytes).
  const liveAt = (at: number): Expression<SqlBool> =>
    sql<SqlBool>`created_at <= ${at} and (deleted_at > ${at} or (deleted_at is null and status <> ${FileStatus.Deleted}))`;

  return {
    async searchAccounts({ text, afterId, limit }) {
      let q = db.selectFrom('accounts').selectAll();
      if (text) q = q.where((eb) => eb.or([contains('login', text), contains('name', text), contains('email', text)]));
      if (afterId !== undefined) q = q.where('id', '>', afterId);
      return (await q.orderBy('id').limit(limit).execute()).map(toAccount);
    },
    async searchFiles(query) {
      let q = db.selectFrom('files').selectAll();
      if (query.name) q = q.where(contains('name', query.name));
      if (query.ownerId !== undefined) q = q.where('owner_id', '=', query.ownerId);
      if (query.sha256) q = q.where('sha256', '=', query.sha256);
      if (query.states && query.states.length > 0) q = q.where('status', 'in', query.states);
      if (query.before) q = q.where(listedAfter(query.before));
      const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
      return rows.map(toFile);
    },
    async dailyUploads(from, to) {
      // The day as a whole number: integer division on both engines (bigint / bigint).
      // A literal divisor, so the SELECT and GROUP BY expressions are the same text on PostgreSQL.
      const day = sql<number>`created_at / ${sql.lit(DAY_MS)}`;
      const rows = await db
        .selectFrom('files')
        .select((eb) => [day.as('day'), eb.fn.countAll().as('files'), eb.fn.sum<number>('size').as('bytes')])
        .where('created_at', '>=', from)
        .where('created_at', '<', to)
        .groupBy(day)
        .orderBy(day)
        .execute();
      return rows.map((r) => ({ day: Number(r.day) * DAY_MS, files: Number(r.files), bytes: Number(r.bytes) }));
    },
    async searchShares({ ownerId, liveOnly, before, limit }) {
      let q = db.selectFrom('shares').selectAll();
      if (ownerId !== undefined) q = q.where('owner_id', '=', ownerId);
      if (liveOnly) q = q.where('revoked_at', 'is', null);
      if (before) q = q.where(listedAfter(before));
      return (await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()).map(toShare);
    },
    async searchRequests({ ownerId, liveOnly, before, limit }) {
      let q = db.selectFrom('upload_requests').selectAll();
      if (ownerId !== undefined) q = q.where('owner_id', '=', ownerId);
      if (liveOnly) q = q.where('closed', '=', 0);
      if (before) q = q.where(listedAfter(before));
      return (await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()).map(toRequest);
    },
    async liveBytesAt(at) {
      const [files, stored] = await Promise.all([
        db
          .selectFrom('files')
          .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('bytes'))
          .where(liveAt(at))
          .executeTakeFirstOrThrow(),
        db
          .selectFrom((qb) =>
            qb
              .selectFrom('files')
              .select((eb) => ['sha256', eb.fn.max<number>('size').as('size')])
              .where(liveAt(at))
              .groupBy('sha256')
              .as('contents'),
          )
          .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('contents.size'), eb.lit(0)).as('bytes'))
          .executeTakeFirstOrThrow(),
      ]);
      return { fileBytes: Number(files.bytes), storedBytes: Number(stored.bytes) };
    },
    async liveBytesChange(from, to) {
      // The files whose liveness can differ between the two times: created or deleted in
      // (from, to]. Each counts its size once for each time it is live at (+ at `to`, − at
      // `from`); each of their contents counts its size once if some file of it (any file,
      // by files_sha256) is live at `to`, minus once if some file is live at `from`.
      const live = (at: number, table: string) =>
        sql<number>`case when ${sql.ref(`${table}.created_at`)} <= ${at} and (${sql.ref(`${table}.deleted_at`)} > ${at} or (${sql.ref(`${table}.deleted_at`)} is null and ${sql.ref(`${table}.status`)} <> ${FileStatus.Deleted})) then 1 else 0 end`;
      // Live at `at` is `live` above, split by state so each half is one range of
      // files_sha256 (sha256, status, created_at; 0020): an active or blocked file has no
      // deleted_at (only the change to deleted sets it, and nothing leaves that state).
      const anyLive = (at: number) =>
        sql<number>`case
          when exists (select 1 from files as other where other.sha256 = changed.sha256 and other.status in (${FileStatus.Active}, ${FileStatus.Blocked}) and other.created_at <= ${at}) then 1
          when exists (select 1 from files as other where other.sha256 = changed.sha256 and other.status = ${FileStatus.Deleted} and other.created_at <= ${at} and other.deleted_at > ${at}) then 1
          else 0 end`;
      const changed = sql`(select sha256, size, ${live(to, 'files')} - ${live(from, 'files')} as change from files
        where (created_at > ${from} and created_at <= ${to}) or (deleted_at > ${from} and deleted_at <= ${to}))`;
      const { rows } = await sql<{ file_bytes: number | string | null; stored_bytes: number | string | null }>`
        select
          (select sum(size * change) from ${changed} as f) as file_bytes,
          (select sum(size * (${anyLive(to)} - ${anyLive(from)})) from (select sha256, max(size) as size from ${changed} as c group by sha256) as changed) as stored_bytes`.execute(
        db,
      );
      const row = rows[0];
      return { fileBytes: Number(row?.file_bytes ?? 0), storedBytes: Number(row?.stored_bytes ?? 0) };
    },
    async signInMethodsOf(accountIds) {
      const methods = new Map(accountIds.map((id) => [id, { totp: false, passkeys: 0, identities: 0 }]));
      if (accountIds.length === 0) return methods;
      const [totp, passkeys, identities] = await Promise.all([
        db.selectFrom('totp_factors').select('account_id').where('account_id', 'in', accountIds).where('confirmed_at', 'is not', null).execute(),
        db
          .selectFrom('passkeys')
          .select((eb) => ['account_id', eb.fn.countAll().as('n')])
          .where('account_id', 'in', accountIds)
          .groupBy('account_id')
          .execute(),
        db
          .selectFrom('account_identities')
          .select((eb) => ['account_id', eb.fn.countAll().as('n')])
          .where('account_id', 'in', accountIds)
          .groupBy('account_id')
          .execute(),
      ]);
      for (const row of totp) methods.get(Number(row.account_id))!.totp = true;
      for (const row of passkeys) methods.get(Number(row.account_id))!.passkeys = Number(row.n);
      for (const row of identities) methods.get(Number(row.account_id))!.identities = Number(row.n);
      return methods;
    },
  };
}
