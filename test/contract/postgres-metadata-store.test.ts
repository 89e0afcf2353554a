import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { openPostgres } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
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
