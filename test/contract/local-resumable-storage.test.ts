import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalBlobStore } from '../../src/blob/local-blob-store.js';
import { LocalResumableStorage } from '../../src/blob/local-resumable-storage.js';
import { resumableStorageContract } from './resumable-storage.contract.js';

const DAY_MS = 86_400_000;

resumableStorageContract('LocalResumableStorage', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'filehaven-resumable-'));
  const blobs = new LocalBlobStore(root);
  await blobs.init();
  return {
    storage: new LocalResumableStorage(root, blobs, DAY_MS),
    blobs,
    sibling: async () => new LocalResumableStorage(root, new LocalBlobStore(root), DAY_MS),
    // Upload files and tus's `<id>.json` records, and anything left in the blob store's staging.
    uploadEntries: async () => [...(await readdir(path.join(root, 'uploads'))), ...(await readdir(blobs.tempDir))],
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});
