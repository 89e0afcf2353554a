import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalBlobStore } from '../../src/blob/local-blob-store.js';
import { openSqlite } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import { blobLifecycleContract } from './blob-lifecycle.contract.js';

blobLifecycleContract('SQLite + local folder', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-lifecycle-'));
  const store = await openMetadataStore(openSqlite(dir));
  const blobs = new LocalBlobStore(dir);
  await blobs.init();
  return {
    store,
    blobs,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
