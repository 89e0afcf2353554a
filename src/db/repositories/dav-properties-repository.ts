import { createHash } from 'node:crypto';
import { type Kysely, type SqlBool, sql } from 'kysely';
import { FileStatus } from '../../domain/types.js';
import type { Database } from '../database.js';
import type { DavPropertiesRepository, DavProperty } from './repositories.js';
import { unexpiredAt } from './rows.js';

/** WebDAV dead properties (migration 0016), one row per property, keyed by a hash of what names it. */
export function davPropertiesRepository(db: Kysely<Database>): DavPropertiesRepository {
  const select = (accountId: number) =>
    db.selectFrom('dav_properties').select(['resource', 'namespace', 'name', 'value_xml']).where('account_id', '=', accountId);
  const toProperty = (row: { namespace: string; name: string; value_xml: string }): DavProperty => ({
    namespace: row.namespace,
    name: row.name,
    valueXml: row.value_xml,
  });
  const upsert = async (accountId: number, resource: string, properties: DavProperty[]) => {
    for (const property of properties) {
      await db
        .insertInto('dav_properties')
        .values({
          key: propertyKey(accountId, resource, property.namespace, property.name),
          account_id: accountId,
          resource,
          namespace: property.namespace,
          name: property.name,
          value_xml: property.valueXml,
        })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value_xml: property.valueXml }))
        .execute();
    }
  };
  return {
    async list(accountId, resource) {
      const rows = await select(accountId).where('resource', '=', resource).orderBy('namespace').orderBy('name').execute();
      return rows.map(toProperty);
    },
    async listMany(accountId, resources) {
      const found = new Map<string, DavProperty[]>();
      // In batches: a bound on the SQL IN list.
      for (let at = 0; at < resources.length; at += 500) {
        const batch = resources.slice(at, at + 500);
        const rows = await select(accountId).where('resource', 'in', batch).orderBy('namespace').orderBy('name').execute();
        for (const row of rows) {
          const list = found.get(row.resource) ?? [];
          list.push(toProperty(row));
          found.set(row.resource, list);
        }
      }
      return found;
    },
    set: upsert,
    async remove(accountId, resource, names) {
      for (const { namespace, name } of names) {
        await db
          .deleteFrom('dav_properties')
          .where('key', '=', propertyKey(accountId, resource, namespace, name))
          .execute();
      }
    },
    async removeAll(accountId, resource) {
      await db.deleteFrom('dav_properties').where('account_id', '=', accountId).where('resource', '=', resource).execute();
    },
    async copyAll(accountId, from, to) {
      const rows = await select(accountId).where('resource', '=', from).execute();
      await db.deleteFrom('dav_properties').where('account_id', '=', accountId).where('resource', '=', to).execute();
      await upsert(accountId, to, rows.map(toProperty));
    },
    async removeOrphans(liveAt) {
      const files = await db
        .deleteFrom('dav_properties')
        .where(sql<SqlBool>`substr(${sql.ref('resource')}, 1, 5) = 'file:'`)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('files')
                .select('files.id')
                .where(sql<SqlBool>`'file:' || ${sql.ref('files.id')} = ${sql.ref('dav_properties.resource')}`)
                .where('files.status', '!=', FileStatus.Deleted)
                .where(unexpiredAt(liveAt, 'files')),
            ),
          ),
        )
        .executeTakeFirst();
      const folders = await db
        .deleteFrom('dav_properties')
        .where(sql<SqlBool>`substr(${sql.ref('resource')}, 1, 7) = 'folder:'`)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('folders')
                .select('folders.id')
                .where(sql<SqlBool>`'folder:' || ${sql.ref('folders.id')} = ${sql.ref('dav_properties.resource')}`),
            ),
          ),
        )
        .executeTakeFirst();
      return Number(files.numDeletedRows) + Number(folders.numDeletedRows);
    },
  };
}

/** The row's key: one column for what four name (the generic table copy of `migrate` walks one). */
export function propertyKey(accountId: number, resource: string, namespace: string, name: string): string {
  return createHash('sha256')
    .update(JSON.stringify([accountId, resource, namespace, name]))
    .digest('hex');
}
