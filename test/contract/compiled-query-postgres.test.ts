import { describe } from 'node:test';
import { openPostgres } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import { createTestSchema, POSTGRES_TEST_URL, postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { compiledQueryContract } from './compiled-query.contract.js';

const skip = await postgresSkipReason();
if (skip) describe('compiled queries: PostgreSQL', { skip }, () => {});
else
  compiledQueryContract('PostgreSQL', 'postgres', async () => {
    const { schema, drop } = await createTestSchema();
    const opened = openPostgres({ url: POSTGRES_TEST_URL, schema, poolSize: 4 });
    const store = await openMetadataStore(opened);
    return {
      db: opened.db,
      store,
      async cleanup() {
        await store.close();
        await drop();
      },
    };
  });
