import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqlite } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import { compiledQueryContract } from './compiled-query.contract.js';

compiledQueryContract('SQLite', 'sqlite', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-sqlite-'));
  const opened = openSqlite(dir);
  const store = await openMetadataStore(opened);
  return {
    db: opened.db,
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
