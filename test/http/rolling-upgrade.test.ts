import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Migration, sql } from 'kysely';
import { DEFAULTS } from '../../src/config/config.js';
import { openDatabase } from '../../src/configured-stores.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import { MIGRATIONS, migrateToLatest } from '../../src/db/migrator.js';
import { TEST_BACKEND } from '../helpers/backend.js';
import { randomPayload, sha256 } from '../helpers/downloads.js';
import { createTestSchema, POSTGRES_TEST_URL } from '../helpers/postgres-test-schema.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// A fleet upgrades one server at a time (issue 10): the first new server migrates the
// database while old servers still serve, and an old server may restart on the migrated
// database. Migrations are additive, so both must keep working. A "newer version" here is
// this one plus two additive migrations of the kinds the rule allows: a new table, and a
// new column with a default on a table every request uses.

const FUTURE: Record<string, Migration> = {
  '0100-future-table': {
    async up(db) {
      await db.schema
        .createTable('future_notes')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('note', 'text')
        .execute();
    },
  },
  '0101-future-column': {
    async up(db) {
      await db.schema
        .alterTable('files')
        .addColumn('future_flag', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
};
const NEWER_VERSION = { ...MIGRATIONS, ...FUTURE };

describe('a database a newer version migrated further', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t?.close());

  /** Runs the newer version's migrations on the server's database, as a new server's start would. */
  async function upgradeDatabase(): Promise<void> {
    const opened = openDatabase(t.config);
    try {
      assert.deepEqual(await migrateToLatest(opened.db, opened.schema, NEWER_VERSION), { newer: [] });
    } finally {
      await opened.db.destroy();
    }
  }

  async function roundTrip(server: TestServer, key: string, name: string): Promise<void> {
    const payload = randomPayload(64 * 1024);
    const up = await server.upload(key, name, payload);
    assert.equal(up.response.status, 201, up.body);
    const list = await server.fetch('/files', { headers: { Authorization: key } });
    assert.equal(list.status, 200);
    assert.match(await list.text(), new RegExp(`<title>${name}</title>`));
    const download = await fetch(`${up.downloadLink}?download=1`);
    assert.equal(download.status, 200);
    assert.equal(sha256(Buffer.from(await download.arrayBuffer())), sha256(payload));
    const deleted = await server.fetch(`/files/${up.id}`, { method: 'DELETE', headers: { Authorization: key } });
    assert.equal(deleted.status, 200);
  }

  test('an old server running during the upgrade goes on serving; an old server started after it runs on it, and says so', async () => {
    const { key } = await t.account();
    await roundTrip(t, key, 'before.bin');
    await upgradeDatabase();
    await roundTrip(t, key, 'during.bin');

    // An old server (re)started on the upgraded database: no "corrupted migrations".
    const restarted = await t.sibling();
    try {
      assert.deepEqual(restarted.server.services.store.newerMigrations, Object.keys(FUTURE));
      await roundTrip(restarted, key, 'after.bin');
    } finally {
      await restarted.close();
    }
    // The newer version's column took its default on the rows the old servers wrote.
    const opened = openDatabase(t.config);
    try {
      const flags = await sql<{ flag: number }>`select distinct future_flag as flag from files`.execute(opened.db);
      assert.deepEqual(
        flags.rows.map((row) => Number(row.flag)),
        [0],
      );
    } finally {
      await opened.db.destroy();
    }
  });
});

test('a database that ran migrations this version does not know but lacks one it needs is refused, by name', async () => {
  const t = await startTestServer();
  try {
    const opened = openDatabase(t.config);
    await t.server.close();
    const names = Object.keys(MIGRATIONS);
    const last = names.at(-1)!;
    try {
      // Another branch of the schema: the future migrations ran and ours did not.
      if (opened.engine === 'sqlite') await sql`delete from filehaven_migrations where name = ${last}`.execute(opened.db);
      else await sql`delete from ${sql.table(`${opened.schema}.filehaven_migrations`)} where name = ${last}`.execute(opened.db);
      await sql`insert into ${sql.table(opened.schema ? `${opened.schema}.filehaven_migrations` : 'filehaven_migrations')} (name, timestamp) values ('0100-future-table', '2026-11-26T00:00:00.000Z')`.execute(
        opened.db,
      );
    } finally {
      await opened.db.destroy();
    }
    await assert.rejects(
      openMetadataStore(openDatabase(t.config)),
      new RegExp(`the database has run 0100-future-table, which this version does not know, but not ${last}, which it needs`),
    );
  } finally {
    await t.close();
  }
});

// An old server starting at the very moment a new one migrates: whichever runs first, the
// old one must come up on the result (its look for newer migrations can miss them, and
// Kysely's migrator then refuses with "corrupted migrations": it looks again). On SQLite
// two starts in one process would share one thread (limits-shared.test.ts says why).
test('an old and a new server migrating one empty database at the same moment both come up', {
  skip: TEST_BACKEND === 'sqlite-local' && 'two migrators in one process cannot share one SQLite file: run with FILEHAVEN_TEST_BACKEND=postgres-s3',
}, async () => {
  for (let round = 0; round < 8; round++) {
    const { schema, drop } = await createTestSchema();
    const config = { ...DEFAULTS, databaseUrl: POSTGRES_TEST_URL, databaseSchema: schema };
    const [old, next] = [openDatabase(config), openDatabase(config)];
    try {
      const [oldOutcome, nextOutcome] = await Promise.all([migrateToLatest(old.db, old.schema), migrateToLatest(next.db, next.schema, NEWER_VERSION)]);
      assert.deepEqual(nextOutcome, { newer: [] });
      // The old one ran first (nothing newer yet) or after (it names the newer ones).
      assert.ok(oldOutcome.newer.length === 0 || JSON.stringify(oldOutcome.newer) === JSON.stringify(Object.keys(FUTURE)), JSON.stringify(oldOutcome));
      const ran = await sql<{ name: string }>`select name from ${sql.table(`${schema}.filehaven_migrations`)}`.execute(next.db);
      assert.deepEqual(ran.rows.map((row) => row.name).sort(), Object.keys(NEWER_VERSION).sort());
    } finally {
      await Promise.all([old.db.destroy(), next.db.destroy()]);
      await drop();
    }
  }
});
