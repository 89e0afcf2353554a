import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqlite } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import { reservationsContract } from './reservations.contract.js';

reservationsContract('SQLite', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-reservations-'));
  const store = await openMetadataStore(openSqlite(dir));
  return {
    store,
    // As in sqlite-metadata-store.test.ts: a second better-sqlite3 connection in this thread
    // would block the event loop while it waits for the write lock, so the peer "server" is
    // the same connection; its transactions queue on it (BEGIN IMMEDIATE), interleaved with
    // the first server's at every await.
    openPeer: async () => store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
