import type { Kysely } from 'kysely';

/**
 * WebDAV (issue 27), in the database so that every server behind the load balancer sees
 * the same locks and properties:
 * - dav_locks: RFC 4918 write locks on paths of an account's tree ("/a/b.txt"; "/" is the
 *   top). A lock names a path, not a file: a lock on an unmapped path reserves the name
 *   (RFC 4918 7.3), and a MOVE leaves locks where they were (7.7). `expires_at` ends it.
 * - dav_properties: dead properties (PROPPATCH), one row per property of a resource. A
 *   resource is named by what it is, not where ("file:<id>", "folder:<id>", "top"), so a
 *   MOVE or a rename keeps them and a COPY copies them.
 * Additive: servers of the previous version ignore these tables.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dav_locks')
    // The lock token's unique part: "urn:uuid:<uuid>" is the token.
    .addColumn('token', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    // The locked path as decoded names joined by "/", "/" for the top; text compared exactly.
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('exclusive', 'integer', (c) => c.notNull())
    // 1 for Depth: infinity (the collection and everything under it), 0 for the resource alone.
    .addColumn('deep', 'integer', (c) => c.notNull())
    // The client's DAV:owner element as it sent it (XML), '' when none.
    .addColumn('owner_xml', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('timeout_seconds', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dav_locks_account_path').on('dav_locks').columns(['account_id', 'path']).execute();
  await db.schema.createIndex('dav_locks_expires').on('dav_locks').column('expires_at').execute();
  await db.schema
    .createTable('dav_properties')
    // SHA-256 (hex) of account id, resource, namespace and name (webdav/dav-properties.ts):
    // one column names the row, as the generic table copy of `migrate` wants.
    .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    // "file:<id>", "folder:<id>" or "top".
    .addColumn('resource', 'varchar(32)', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    // The property element's content as XML, with the namespaces it uses declared in it.
    .addColumn('value_xml', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dav_properties_resource').on('dav_properties').columns(['account_id', 'resource']).execute();
}
