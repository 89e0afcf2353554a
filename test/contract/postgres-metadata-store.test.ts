import { describe } from 'node:test';
import { openPostgres } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { createTestSchema, POSTGRES_TEST_URL, postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { metadataStoreContract } from './metadata-store.contract.js';

const skip = await postgresSkipReason();
if (skip) {
  describe('MetadataStore contract: PostgreSQL', { skip }, () => {});
} else {
  metadataStoreContract('PostgreSQL', async () => {
    const { schema, drop } = await createTestSchema();
    const open = () => openMetadataStore(openPostgres({ url: POSTGRES_TEST_URL, schema, poolSize: 8 }));
    const store = await open();
    const peers: MetadataStore[] = [];
    return {
      store,
      async openPeer() {
        const peer = await open();
        peers.push(peer);
        return peer;
      },
      async cleanup() {
        await Promise.all([store, ...peers].map((s) => s.close()));
        await drop();
      },
    };
  });
}
