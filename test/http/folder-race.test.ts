import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { filesForm, form, read } from '../helpers/api-checks.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

/**
 * DELETE /folders/<id> racing PUT /folders/<id>;files, for real and many times (on every
 * backend: on PostgreSQL the review saw a raw foreign-key violation, a 500). Each pair ends
 * one of two ways: the removal first (the move gets errorFolderNotFound) or the move first
 * (the removal gets errorFolderNotEmpty and the files are in the folder). Never a 500.
 */
let t: TestServer;
let owner: TestAccount;
const ROUNDS = 25;

before(async () => {
  t = await startTestServer();
  owner = await t.account();
});
after(() => t.close());

const codeOf = (body: string) => /<entry>\s*<title>([^<]+)<\/title>/.exec(body)?.[1] ?? '';

test('a folder removed while files move into it: one wins cleanly, every time', async () => {
  const outcomes = { removedFirst: 0, movedFirst: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    const created = await read(await t.fetch('/folders', { method: 'POST', headers: { Authorization: owner.key }, body: form({ name: `race ${round}` }) }));
    const folderId = /<entry>\s*<id>([^<]+)<\/id>/.exec(created.body)?.[1];
    assert.ok(folderId, created.body);
    const fileId = (await t.upload(owner.key, `f${round}.txt`, `round ${round}`)).id;
    const [removal, move] = await Promise.all([
      t.fetch(`/folders/${folderId}`, { method: 'DELETE', headers: { Authorization: owner.key } }).then(read),
      t.fetch(`/folders/${folderId};files`, { method: 'PUT', headers: { Authorization: owner.key }, body: filesForm([fileId]) }).then(read),
    ]);
    const context = `round ${round}: DELETE ${removal.status} ${codeOf(removal.body)}; PUT ${move.status} ${codeOf(move.body)}`;
    const folderOfFile = (await t.server.services.store.files.byId(fileId))?.folderId ?? null;
    if (removal.status === 200) {
      assert.equal(move.status, 404, context);
      assert.equal(codeOf(move.body), 'errorFolderNotFound', context);
      assert.equal(folderOfFile, null, context);
      outcomes.removedFirst += 1;
    } else {
      assert.equal(move.status, 200, context);
      assert.equal(codeOf(removal.body), 'errorFolderNotEmpty', context);
      assert.equal(folderOfFile, folderId, context);
      outcomes.movedFirst += 1;
    }
  }
  // Both orders are valid; the count only says which ones this run saw.
  assert.equal(outcomes.removedFirst + outcomes.movedFirst, ROUNDS);
});
