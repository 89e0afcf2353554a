import { describe, test } from 'node:test';
import pg from 'pg';
import { openPostgres } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import { createTestSchema, POSTGRES_TEST_URL, postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { postgresHarness } from './metadata-store-harnesses.js';
import { metadataStoreContract } from './metadata-store.contract.js';

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
