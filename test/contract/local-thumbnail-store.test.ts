import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalThumbnailStore } from '../../src/blob/local-thumbnail-store.js';
import { thumbnailStoreContract } from './thumbnail-store.contract.js';

/** Every file under `dir`, relative to it; none when it does not exist. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(dir, path.join(entry.parentPath ?? entry.path, entry.name)));
}

thumbnailStoreContract('LocalThumbnailStore', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'filehaven-thumbs-'));
  const store = new LocalThumbnailStore(root);
  return {
    store,
    // Temp files (in <root>/tmp) and anything in thumbs/ that is not a thumbnail.
    strayEntries: async () => [
      ...(await filesUnder(store.tempDir)).map((name) => `tmp/${name}`),
      ...(await filesUnder(store.dir)).filter((name) => !/^([0-9a-f]{2})\/\1[0-9a-f]{62}$/.test(name)),
    ],
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});
