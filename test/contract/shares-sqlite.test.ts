import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqlite } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import type { MetadataStoreFactory } from './metadata-store.contract.js';
import { sharesContract } from './shares.contract.js';

// Two real connections on one database file: a count is one statement, never a
// transaction held across an await, so a second better-sqlite3 connection in this thread
// waits for the lock only for the length of a statement (metadata-store-harnesses.ts
// says why transactions need the shared connection instead).
const twoConnections: MetadataStoreFactory = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-sqlite-'));
  const store = await openMetadataStore(openSqlite(dir));
  const peers: MetadataStore[] = [];
  return {
    store,
    async openPeer() {
      const peer = await openMetadataStore(openSqlite(dir));
      peers.push(peer);
      return peer;
    },
    async cleanup() {
      for (const s of [store, ...peers]) await s.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

sharesContract('SQLite', twoConnections);
