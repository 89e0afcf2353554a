import { type Kysely, type SqlBool, sql } from 'kysely';
import { FileStatus } from '../../domain/types.js';
import { definedQuery } from '../compiled-query.js';
import type { Database } from '../database.js';
import type { Engine } from '../dialect.js';
import type { AuditRepository, HousekeepingRepository, ServerSettingsRepository, StoreStats, UploadLogRepository } from './repositories.js';
import { unexpiredAt } from './rows.js';

/** Every stored upload writes one, in its file's transaction: compiled once (issue 28). */
const insertUploadLog = definedQuery([1, 2, 3], (db: Kysely<Database>, accountId: number, bytes: number, at: number) =>
  db.insertInto('upload_log').values({ account_id: accountId, bytes, at }),
);

export function uploadLogRepository(db: Kysely<Database>): UploadLogRepository {
  return {
    async record(accountId, bytes, at) {
      await insertUploadLog(db, accountId, bytes, at);
    },
    async windowSum(accountId, since) {
      const row = await db
        .selectFrom('upload_log')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('bytes'), eb.lit(0)).as('bytes'))
        .where('account_id', '=', accountId)
        .where('at', '>=', since)
        .executeTakeFirstOrThrow();
      // PostgreSQL returns bigint sums as strings.
      return Number(row.bytes);
    },
    async oldest(accountId, since, limit) {
      const rows = await db
        .selectFrom('upload_log')
        .select(['bytes', 'at'])
        .where('account_id', '=', accountId)
        .where('at', '>=', since)
        .orderBy('at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map((r) => ({ bytes: Number(r.bytes), at: Number(r.at) }));
    },
    async prune(before) {
      const result = await db.deleteFrom('upload_log').where('at', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export function auditRepository(db: Kysely<Database>): AuditRepository {
  return {
    async record(entry) {
      await db.insertInto('audit_log').values(entry).execute();
    },
    async list({ limit, action }) {
      let q = db.selectFrom('audit_log').selectAll();
      // A prefix match without LIKE, so `%` and `_` in the filter mean themselves.
      if (action) q = q.where(sql<string>`substr(action, 1, ${action.length})`, '=', action);
      const rows = await q.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map((r) => ({ ...r, id: Number(r.id), at: Number(r.at) }));
    },
    async search(filter) {
      let q = db.selectFrom('audit_log').selectAll();
      if (filter.actor) q = q.where('actor', '=', filter.actor);
      if (filter.action) q = q.where(sql<string>`substr(action, 1, ${filter.action.length})`, '=', filter.action);
      if (filter.object) q = q.where('object', '=', filter.object);
      if (filter.from !== undefined) q = q.where('at', '>=', filter.from);
      if (filter.to !== undefined) q = q.where('at', '<', filter.to);
      const before = filter.before;
      if (before) q = q.where(sql<SqlBool>`(${sql.ref('at')}, ${sql.ref('id')}) < (${before.at}, ${before.id})`);
      const rows = await q.orderBy('at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
      return rows.map((r) => ({ ...r, id: Number(r.id), at: Number(r.at) }));
    },
  };
}

export function housekeepingRepository(db: Kysely<Database>, engine: Engine): HousekeepingRepository {
  return {
    async refreshStatistics() {
      // SQLite keeps no statistics by itself: `PRAGMA optimize` analyses the tables whose
      // size changed much since (bounded by the analysis_limit set at open). PostgreSQL's
      // autovacuum analyses on its own.
      if (engine === 'sqlite') await sql`PRAGMA optimize`.execute(db);
    },
    async stats(): Promise<StoreStats> {
      // The totals the database keeps (migration 0019): a few rows per kind between folds,
      // never a pass over files.
      const [accounts, totals] = await Promise.all([
        db
          .selectFrom('accounts')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('site_totals')
          .select((eb) => [
            'kind',
            eb.fn.sum<number>('items').as('items'),
            eb.fn.sum<number>('bytes').as('bytes'),
            eb.fn.sum<number>('downloads').as('downloads'),
            eb.fn.sum<number>('served').as('served'),
          ])
          .groupBy('kind')
          .execute(),
      ]);
      const files = { A: { count: 0, bytes: 0 }, B: { count: 0, bytes: 0 }, D: { count: 0, bytes: 0 } } as StoreStats['files'];
      const blobs = { count: 0, bytes: 0 };
      let downloads = 0;
      let bytesServed = 0;
      for (const row of totals) {
        const kept = { count: Number(row.items), bytes: Number(row.bytes) };
        if (row.kind === 'blob') Object.assign(blobs, kept);
        else if (row.kind in files) files[row.kind as FileStatus] = kept;
        downloads += Number(row.downloads);
        bytesServed += Number(row.served);
      }
      return { accounts: Number(accounts.n), files, blobs, downloads, bytesServed };
    },
    async foldTotals() {
      // Run in a transaction (the service's): the rows summed are the rows deleted. On
      // PostgreSQL one statement does both, so a fold racing another, or a writer's
      // uncommitted rows, can only leave rows for the next fold, never count one twice.
      if (engine === 'postgres') {
        // Nothing to fold (one row per kind already): no rewrite of those rows each minute.
        const { rows: before } = await sql<{ rows: string; kinds: string }>`select count(*) as rows, count(distinct kind) as kinds from site_totals`.execute(
          db,
        );
        if (Number(before[0]?.rows ?? 0) <= Number(before[0]?.kinds ?? 0)) return Number(before[0]?.rows ?? 0);
        const folded = await sql<{ n: string }>`
          with gone as (delete from site_totals returning kind, items, bytes, downloads, served),
          summed as (
            insert into site_totals (kind, items, bytes, downloads, served)
            select kind, sum(items), sum(bytes), sum(downloads), sum(served) from gone group by kind
            returning 1
          )
          select (select count(*) from gone) as n
        `.execute(db);
        return Number(folded.rows[0]?.n ?? 0);
      }
      // SQLite: the transaction is the only writer until it commits.
      const sums = await db
        .selectFrom('site_totals')
        .select((eb) => [
          'kind',
          eb.fn.countAll<number>().as('n'),
          eb.fn.sum<number>('items').as('items'),
          eb.fn.sum<number>('bytes').as('bytes'),
          eb.fn.sum<number>('downloads').as('downloads'),
          eb.fn.sum<number>('served').as('served'),
        ])
        .groupBy('kind')
        .execute();
      const rows = sums.reduce((n, row) => n + Number(row.n), 0);
      if (rows <= sums.length) return rows;
      await db.deleteFrom('site_totals').execute();
      await db
        .insertInto('site_totals')
        .values(sums.map(({ kind, items, bytes, downloads, served }) => ({ kind, items, bytes, downloads, served })))
        .execute();
      return rows;
    },
    async unreferencedBlobs(before, limit, after) {
      let q = db.selectFrom('blobs').select(['blobs.sha256', 'blobs.size']).where('blobs.created_at', '<', before);
      if (after !== undefined) q = q.where('blobs.sha256', '>', after);
      const rows = await q
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('files').select('files.id').whereRef('files.sha256', '=', 'blobs.sha256').where('files.status', '!=', FileStatus.Deleted))),
        )
        .orderBy('blobs.sha256')
        .limit(limit)
        .execute();
      return rows.map((r) => ({ sha256: r.sha256, size: Number(r.size) }));
    },
    async expiredFiles(cutoff, limit, after) {
      // Walks files_created (0017) in upload order from the file `after`, the last of the
      // batch before: a batch reads about its own rows, never again the files kept or
      // deleted behind it (a fresh pass starts at the oldest). `created_at < cutoff` is
      // implied by the rule (a download is never before its upload) and bounds the range.
      let q = db
        .selectFrom('files')
        .select('id')
        .where('created_at', '<', cutoff)
        .where('status', '!=', FileStatus.Deleted)
        .where((eb) => eb(eb.fn.coalesce('last_download_at', 'created_at'), '<', cutoff));
      const from = after === undefined ? undefined : await db.selectFrom('files').select('created_at').where('id', '=', after).executeTakeFirst();
      if (from) q = q.where(sql<SqlBool>`(${sql.ref('created_at')}, ${sql.ref('id')}) > (${from.created_at}, ${after})`);
      const rows = await q.orderBy('created_at').orderBy('id').limit(limit).execute();
      return rows.map((r) => r.id);
    },
    async pastExpiry(now, limit, after) {
      // Reads the partial index files_expires (migration 0014) in expiry order, from the file
      // `after` on (keyset, as expiredFiles: deleted files stay in the index).
      let q = db.selectFrom('files').select('id').where('expires_at', 'is not', null).where('expires_at', '<=', now).where('status', '!=', FileStatus.Deleted);
      const from = after === undefined ? undefined : await db.selectFrom('files').select('expires_at').where('id', '=', after).executeTakeFirst();
      if (from?.expires_at != null) q = q.where(sql<SqlBool>`(${sql.ref('expires_at')}, ${sql.ref('id')}) > (${from.expires_at}, ${after})`);
      const rows = await q.orderBy('expires_at').orderBy('id').limit(limit).execute();
      return rows.map((r) => r.id);
    },
    async countPastExpiry(now) {
      const row = await db
        .selectFrom('files')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('expires_at', 'is not', null)
        .where('expires_at', '<=', now)
        .where('status', '!=', FileStatus.Deleted)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async countExpired(cutoff, pastExpiryAt) {
      let q = db
        .selectFrom('files')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('created_at', '<', cutoff)
        .where('status', '!=', FileStatus.Deleted)
        .where((eb) => eb(eb.fn.coalesce('last_download_at', 'created_at'), '<', cutoff));
      if (pastExpiryAt !== undefined) q = q.where(unexpiredAt(pastExpiryAt));
      const row = await q.executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

export function serverSettingsRepository(db: Kysely<Database>): ServerSettingsRepository {
  const get = async (name: string) => (await db.selectFrom('server_settings').select('value').where('name', '=', name).executeTakeFirst())?.value ?? null;
  return {
    get,
    async setIfAbsent(name, value) {
      await db
        .insertInto('server_settings')
        .values({ name, value })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      return (await get(name))!;
    },
  };
}
