import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { openPostgres } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import { MIGRATIONS, migrateToLatest } from '../../src/db/migrator.js';
import { createTestSchema, POSTGRES_TEST_URL, postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { listingQueries } from './listing-queries.js';
import { metadataStoreContract } from './metadata-store.contract.js';
import { postgresHarness } from './metadata-store-harnesses.js';

const skip = await postgresSkipReason();
if (skip) {
  describe('MetadataStore contract: PostgreSQL', { skip }, () => {});
} else {
  metadataStoreContract('PostgreSQL', postgresHarness);
}

test('PostgreSQL: a site starts while another schema of the database is created and dropped', { skip }, async () => {
  // Kysely's migrator lists every table of the database first; a schema dropped during that
  // listing (another site, a test run beside this one) failed the start (3F000).
  const churn = new pg.Client({ connectionString: POSTGRES_TEST_URL });
  await churn.connect();
  let stop = false;
  const churning = (async () => {
    for (let i = 0; !stop; i++) {
      const name = `churn_${process.pid}_${i}`;
      await churn.query(`create schema ${name}; create table ${name}.a (x int, y text); create table ${name}.b (x int)`);
      await churn.query(`drop schema ${name} cascade`);
      // A short pause: without one, on a loaded machine, every listing met a drop.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  try {
    for (let k = 0; k < 15; k++) {
      const { schema, drop } = await createTestSchema();
      try {
        await (await openMetadataStore(openPostgres({ url: POSTGRES_TEST_URL, schema, poolSize: 2 }))).close();
      } finally {
        await drop();
      }
    }
  } finally {
    stop = true;
    await churning;
    await churn.end();
  }
});

test('PostgreSQL: a listing page after a cursor can be one index range, already in order', { skip }, async () => {
  // An empty table is planned as a sequential scan whatever the indexes; with scans,
  // bitmaps and sorts priced out, what is left shows whether an index serves the cursor
  // (Index Cond, not Filter) in the listing's order (no Sort). What PostgreSQL picks on a
  // real table is its statistics' call; bench/ measures that.
  const { schema, drop } = await createTestSchema();
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL });
  try {
    await (await openMetadataStore(openPostgres({ url: POSTGRES_TEST_URL, schema, poolSize: 1 }))).close();
    await client.connect();
    await client.query(`set search_path to "${schema}"; set enable_seqscan = off; set enable_bitmapscan = off; set enable_sort = off`);
    for (const { name, query } of await listingQueries('postgres')) {
      const plan = (await client.query(`EXPLAIN ${query.sql}`, [...query.parameters])).rows
        .map((row: { 'QUERY PLAN': string }) => row['QUERY PLAN'])
        .join('\n');
      assert.match(plan, /Index Scan Backward using \w+ on (files|folders)/, `${name}:\n${plan}`);
      assert.match(plan, /Index Cond: .*\(ROW\(created_at, \(id\)::text\) < ROW\(/, `${name}: the cursor bounds the index scan:\n${plan}`);
      assert.doesNotMatch(plan, /Sort/, `${name}: no sort:\n${plan}`);
    }
  } finally {
    await client.end();
    await drop();
  }
});

test('PostgreSQL: the site totals migration runs while older servers upload and delete; no writer fails, the totals are exact', { skip }, async () => {
  // An upload locks blobs then files, a delete files then blobs: 0019's triggers need both,
  // so it takes them in an upload's order and gives up before a deadlock picks a writer.
  const { schema, drop } = await createTestSchema();
  const opened = openPostgres({ url: POSTGRES_TEST_URL, schema, poolSize: 2 });
  const pool = new pg.Pool({ connectionString: POSTGRES_TEST_URL, max: 8 });
  pool.on('connect', (client) => void client.query(`set search_path to "${schema}"`));
  const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
  try {
    await migrateToLatest(opened.db, schema, Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < '0019')));
    await pool.query(`insert into accounts (id, login, password_hash, created_at) values (1, 'writer', 'x', 0)`);
    let next = 0;
    const digestOf = (id: string) => id.padStart(64, '0');
    for (let i = 0; i < 60; i++) {
      const id = `f${next++}`;
      await pool.query('insert into blobs (sha256, size, created_at) values ($1, 10, 0)', [digestOf(id)]);
      await pool.query(`insert into files (id, owner_id, name, size, sha256, status, delete_hash, created_at) values ($1, 1, $1, 10, $2, 'A', 'h', 0)`, [
        id,
        digestOf(id),
      ]);
    }
    let stop = false;
    const failures: string[] = [];
    const inTransaction = async (work: (client: pg.PoolClient) => Promise<void>) => {
      const client = await pool.connect();
      try {
        await client.query('begin');
        await work(client);
        await client.query('commit');
      } catch (error) {
        failures.push((error as Error).message);
        await client.query('rollback');
      } finally {
        client.release();
      }
    };
    let deleted = 0;
    const uploader = async () => {
      while (!stop) {
        await inTransaction(async (client) => {
          const id = `f${next++}`;
          await client.query('insert into blobs (sha256, size, created_at) values ($1, 7, 0)', [digestOf(id)]);
          await pause();
          await client.query(`insert into files (id, owner_id, name, size, sha256, status, delete_hash, created_at) values ($1, 1, $1, 7, $2, 'A', 'h', 0)`, [
            id,
            digestOf(id),
          ]);
        });
      }
    };
    const deleter = async () => {
      while (!stop && deleted < 60) {
        const id = `f${deleted++}`;
        await inTransaction(async (client) => {
          await client.query(`update files set status = 'D', deleted_at = 1, downloads = downloads + 1 where id = $1`, [id]);
          await pause();
          await client.query('delete from blobs where sha256 = $1', [digestOf(id)]);
        });
      }
    };
    const writers = [uploader(), uploader(), deleter(), deleter()];
    await new Promise((resolve) => setTimeout(resolve, 200));
    try {
      await migrateToLatest(opened.db, schema);
    } finally {
      stop = true;
      await Promise.all(writers);
    }
    assert.deepEqual(failures, [], 'no writer was a deadlock victim');
    const kept = await pool.query(
      'select kind, sum(items)::int as items, sum(bytes)::int as bytes, sum(downloads)::int as downloads from site_totals group by kind order by kind',
    );
    const real = await pool.query(
      `select status as kind, count(*)::int as items, sum(size)::int as bytes, sum(downloads)::int as downloads from files group by status
       union all select 'blob', count(*)::int, sum(size)::int, 0 from blobs order by 1`,
    );
    assert.deepEqual(kept.rows, real.rows);
    assert.ok(real.rows.length === 3, `uploads and deletes both ran: ${JSON.stringify(real.rows)}`);
  } finally {
    await pool.end();
    await opened.db.destroy();
    await drop();
  }
});
