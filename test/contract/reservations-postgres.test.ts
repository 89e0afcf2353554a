import { describe } from 'node:test';
import { openPostgres } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { createTestSchema, POSTGRES_TEST_URL, postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { reservationsContract } from './reservations.contract.js';

const skip = await postgresSkipReason();
if (skip) {
  describe('reservations contract: PostgreSQL', { skip }, () => {});
} else {
  reservationsContract('PostgreSQL', async () => {
    const { schema, drop } = await createTestSchema();
    const open = () => openMetadataStore(openPostgres({ url: POSTGRES_TEST_URL, schema, poolSize: 8 }));
    const store = await open();
    // Each peer is another server: its own pool of connections on the same schema.
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
