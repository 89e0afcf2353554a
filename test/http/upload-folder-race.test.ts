import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { ApiError } from '../../src/domain/errors.js';
import type { UploadFolder } from '../../src/uploads/upload-input.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

/**
 * The upload use case writes a file row in its folder in the one transaction that admits
 * its bytes, under the folder's lock (uploads/admission.ts), raced for real against the
 * folder's removal on every backend. Each pair ends one of two ways: the upload first (the
 * removal gets errorFolderNotEmpty, the file is in the folder) or the removal first (the
 * web form's `refuse` gets errorFolderNotFound and keeps nothing, its bytes included; a
 * resumable upload's `root` lands at the top level). Never a file in a removed folder.
 * With the folder lock taken out of the admission this test fails on PostgreSQL: the
 * removal or the upload runs into the other's row (a foreign-key violation, a 500).
 * SQLite, one writer at a time, passes either way.
 */
let t: TestServer;
let owner: TestAccount;
const ROUNDS = 20;

before(async () => {
  t = await startTestServer();
  owner = await t.account();
});
after(() => t.close());

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

for (const ifGone of ['refuse', 'root'] as const) {
  test(`an upload into a folder removed meanwhile (${ifGone}): one wins cleanly, every time`, async () => {
    const { services } = t.server;
    const outcomes = { uploadedFirst: 0, removedFirst: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const folder = await services.folders.create(owner.account, `race ${ifGone} ${round}`);
      const bytes = randomBytes(1000 + round);
      const target: UploadFolder = { id: folder.id, ifGone };
      // The bytes are staged first: what races is the admission's transaction and the removal's.
      let staged!: () => void;
      const isStaged = new Promise<void>((resolve) => {
        staged = resolve;
      });
      let go!: () => void;
      const started = new Promise<void>((resolve) => {
        go = resolve;
      });
      const uploading = services.uploads.upload({
        owner: owner.account,
        folder: target,
        source: {
          kind: 'stream',
          receive: async ({ stage }) => {
            const received = await stage(Readable.from([bytes]));
            staged();
            await started;
            return { staged: received, name: `f${round}.bin` };
          },
        },
      });
      await isStaged;
      // Started in either order, a few milliseconds apart now and then, so both orders
      // happen on every engine (SQLite runs one write transaction at a time).
      let removing: Promise<unknown>;
      if (round % 2 === 0) {
        removing = services.folders.remove(owner.account, folder.id);
        go();
      } else {
        go();
        await setTimeout(round % 4);
        removing = services.folders.remove(owner.account, folder.id);
      }
      const [upload, removal] = await Promise.allSettled([uploading, removing]);
      const context = `round ${round}: upload ${upload.status}, removal ${removal.status}`;
      if (removal.status === 'rejected') {
        assert.ok(removal.reason instanceof ApiError && removal.reason.code === 'errorFolderNotEmpty', `${context}: ${removal.reason}`);
        assert.equal(upload.status, 'fulfilled', context);
        assert.equal((await services.store.files.byId(upload.value.file.id))?.folderId, folder.id, context);
        outcomes.uploadedFirst += 1;
        continue;
      }
      assert.equal(await services.store.folders.byId(folder.id), null, context);
      if (ifGone === 'refuse') {
        assert.ok(upload.status === 'rejected' && upload.reason instanceof ApiError && upload.reason.code === 'errorFolderNotFound', context);
        // Nothing of the refused upload is kept: no blob row, so no bytes either.
        assert.equal(await services.store.blobs.keyOf(sha256(bytes)), null, context);
      } else {
        assert.equal(upload.status, 'fulfilled', context);
        assert.equal((await services.store.files.byId(upload.value.file.id))?.folderId, null, context);
      }
      outcomes.removedFirst += 1;
    }
    // Both orders are valid; the count only says which ones this run saw.
    assert.equal(outcomes.uploadedFirst + outcomes.removedFirst, ROUNDS);
  });
}
