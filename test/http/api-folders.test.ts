// Folders and moving files (SPEC.md "Folder", "PUT /folders/<folder_id>;files"; API.md 7).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, assertAtomOk, filesForm, form, linkTitled, type ReadResponse, read } from '../helpers/api-checks.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

let t: TestServer;
let owner: TestAccount;
let other: TestAccount;
before(async () => {
  t = await startTestServer();
  owner = await t.account();
  other = await t.account({ premiumDays: 10 });
});
after(() => t.close());

let seq = 0;
async function upload(account: TestAccount, content = `folder test ${++seq}`): Promise<{ id: string; size: number }> {
  const up = await t.upload(account.key, `f${seq}.txt`, content);
  assert.equal(up.response.status, 201, up.body);
  return { id: up.id, size: Buffer.byteLength(content) };
}

async function createFolder(account: TestAccount, fields: Record<string, string> = { name: 'docs' }): Promise<ReadResponse> {
  return read(await t.fetch('/folders', { method: 'POST', headers: { Authorization: account.key }, body: form(fields) }));
}

async function newFolder(account: TestAccount, name = 'docs', parent?: string): Promise<string> {
  const response = await createFolder(account, parent ? { name, parent } : { name });
  return assertAtomOk(response, 201, 'Folder').entry.id;
}

const showFolder = async (account: TestAccount, id: string) => read(await t.fetch(`/folders/${id}`, { headers: { Authorization: account.key } }));
const deleteFolder = async (account: TestAccount, id: string) =>
  read(await t.fetch(`/folders/${id}`, { method: 'DELETE', headers: { Authorization: account.key } }));
const move = async (account: TestAccount, folderId: string, ids: string[]) =>
  read(await t.fetch(`/folders/${folderId};files`, { method: 'PUT', headers: { Authorization: account.key }, body: filesForm(ids) }));
const folderOf = async (id: string) => (await t.server.services.store.files.byId(id))?.folderId;
const asArray = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/**
 * A concurrent DELETE /folders/<id>, made deterministic: the next read of this folder
 * through the store returns it and then removes it, as if the DELETE committed right
 * after the service's ownership check. Returns the function that undoes the patch.
 */
function removeAfterFirstRead(folderId: string): () => void {
  const folders = t.server.services.store.folders;
  const original = folders.byId;
  folders.byId = async (id) => {
    const found = await original.call(folders, id);
    if (id === folderId) {
      folders.byId = original;
      await folders.remove(id);
    }
    return found;
  };
  return () => {
    folders.byId = original;
  };
}

describe('POST /folders', () => {
  test('201 Folder with a new id, the name, and a folder link of length 0', async () => {
    const feed = assertAtomOk(await createFolder(owner, { name: 'Holiday 2026' }), 201, 'Folder');
    const id = feed.entry.id;
    assert.match(id, /^[A-Z0-9]{10}$/);
    assert.equal(feed.entry.title, 'Holiday 2026');
    const link = linkTitled(feed.entry, 'folder_link');
    assert.equal(link['@href'], `${t.server.webUrl}/folder/${id}`);
    assert.equal(link['@rel'], 'enclosure');
    assert.equal(link['@length'], '0');
    const row = await t.server.services.store.folders.byId(id);
    assert.equal(row?.ownerId, owner.account.id);
    assert.equal(row?.parentId, null);
  });

  test('the name is sanitised: control and bidi characters dropped, trimmed, empty becomes a default', async () => {
    const cleaned = assertAtomOk(await createFolder(owner, { name: '  My\u0007 Docs\u202e\u0000  ' }), 201, 'Folder');
    assert.equal(cleaned.entry.title, 'My Docs');
    const empty = assertAtomOk(await createFolder(owner, { name: '\u0001 \t' }), 201, 'Folder');
    assert.equal(empty.entry.title, 'folder');
    const missing = assertAtomOk(await createFolder(owner, {}), 201, 'Folder');
    assert.equal(missing.entry.title, 'folder');
    const long = assertAtomOk(await createFolder(owner, { name: 'é'.repeat(300) }), 201, 'Folder');
    assert.equal(long.entry.title, 'é'.repeat(127), 'cut to 255 bytes of UTF-8 without splitting a character');
    const markup = assertAtomOk(await createFolder(owner, { name: '<b>&"x"</b>' }), 201, 'Folder');
    assert.equal(markup.entry.title, '<b>&"x"</b>');
  });

  test("an optional parent that is the caller's folder", async () => {
    const parent = await newFolder(owner, 'parent');
    const child = await newFolder(owner, 'child', parent);
    assert.equal((await t.server.services.store.folders.byId(child))?.parentId, parent);
  });

  test('a parent deleted between its check and the insert: 404 errorFolderNotFound, nothing created', async () => {
    const parent = await newFolder(owner, 'short-lived parent');
    const restore = removeAfterFirstRead(parent);
    try {
      assertAtomError(await createFolder(owner, { name: 'orphan', parent }), 404, 'errorFolderNotFound');
    } finally {
      restore();
    }
    assert.equal(await t.server.services.store.folders.byId(parent), null);
  });

  test('a parent of another account: 403 errorPermissionDenied; unknown parent: 404 errorFolderNotFound; nothing created', async () => {
    const theirs = await newFolder(other, 'theirs');
    assertAtomError(await createFolder(owner, { name: 'x', parent: theirs }), 403, 'errorPermissionDenied');
    assertAtomError(await createFolder(owner, { name: 'x', parent: 'ZZZZZZZZZZ' }), 404, 'errorFolderNotFound');
    assertAtomError(await createFolder(owner, { name: 'x', parent: 'lowercase1' }), 404, 'errorFolderNotFound');
    assert.deepEqual(await t.server.services.store.folders.children(theirs), []);
  });
});

describe('GET /folders/<id>', () => {
  test('lists the active files; length is the total of their bytes', async () => {
    const folder = await newFolder(owner, 'listing');
    const a = await upload(owner, 'aaaa');
    const b = await upload(owner, 'bbbbbbbbb');
    const blocked = await upload(owner, 'blocked bytes');
    const deleted = await upload(owner, 'deleted bytes!');
    assertAtomOk(await move(owner, folder, [a.id, b.id, blocked.id, deleted.id]), 200, 'Add files to folder');
    await t.server.services.files.block(blocked.id);
    await t.server.services.files.operatorDelete(deleted.id);
    const feed = assertAtomOk(await showFolder(owner, folder), 200, 'Folder');
    assert.equal(feed.entry.id, folder);
    assert.equal(feed.entry.title, 'listing');
    assert.equal(linkTitled(feed.entry, 'folder_link')['@length'], String(a.size + b.size));
    const listed = asArray<Record<string, string>>(feed.entry['ed:file'])
      .map((f) => f['@id'])
      .sort();
    assert.deepEqual(listed, [a.id, b.id].sort());
  });

  test('an empty folder: length 0, no files', async () => {
    const folder = await newFolder(owner, 'empty');
    const feed = assertAtomOk(await showFolder(owner, folder), 200, 'Folder');
    assert.equal(linkTitled(feed.entry, 'folder_link')['@length'], '0');
    assert.deepEqual(asArray(feed.entry['ed:file']), []);
  });

  test("another account's folder: 403 errorPermissionDenied; unknown: 404 errorFolderNotFound", async () => {
    const theirs = await newFolder(other, 'private');
    assertAtomError(await showFolder(owner, theirs), 403, 'errorPermissionDenied');
    assertAtomError(await showFolder(owner, 'ZZZZZZZZZZ'), 404, 'errorFolderNotFound');
  });
});

describe('GET /folders/<id> page by page', () => {
  /** The self link and the feed-level next link after it, if any. */
  function feedLinks(body: string): { self: string; next: string | null } {
    const match = /\n {2}<link rel="self" href="([^"]+)"\/>\n(?: {2}<link rel="next" href="([^"]+)"\/>\n)?<\/feed>/.exec(body);
    assert.ok(match, body);
    return { self: match[1]!, next: match[2]?.replace(/&amp;/g, '&') ?? null };
  }

  test('limit and cursor page the active files newest first; ed:files and length count the whole folder; sub-folders come with the first page', async () => {
    const folder = await newFolder(owner, 'paged');
    const sub = await newFolder(owner, 'sub', folder);
    const files: { id: string; size: number }[] = [];
    for (let i = 0; i < 7; i++) files.push(await upload(owner, `paged ${i} ${'x'.repeat(i)}`));
    const blocked = await upload(owner, 'paged but blocked');
    assertAtomOk(await move(owner, folder, [...files.map((f) => f.id), blocked.id]), 200, 'Add files to folder');
    await t.server.services.files.block(blocked.id);
    const rows = await t.server.services.store.files.byIds(files.map((f) => f.id));
    const newestFirst = rows.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)).map((f) => f.id);
    const bytes = files.reduce((sum, f) => sum + f.size, 0);

    const seen: string[][] = [];
    let path: string | null = `/folders/${folder}?limit=3`;
    while (path !== null) {
      const response = await read(await t.fetch(path, { headers: { Authorization: owner.key } }));
      const feed = assertAtomOk(response, 200, 'Folder');
      assert.equal(feed.entry.id, folder);
      assert.equal(feed.entry['ed:files'], '7', 'every active file of the folder, not just this page');
      assert.equal(linkTitled(feed.entry, 'folder_link')['@length'], String(bytes));
      const folders = asArray<Record<string, string>>(feed.entry['ed:folder']).map((f) => f['@id']);
      assert.deepEqual(folders, seen.length === 0 ? [sub] : [], 'sub-folders on the first page only');
      seen.push(asArray<Record<string, string>>(feed.entry['ed:file']).map((f) => f['@id']!));
      const links = feedLinks(response.body);
      assert.equal(links.self, `/folders/${folder}`);
      if (links.next !== null) assert.match(links.next, new RegExp(`^/folders/${folder}\\?limit=3&cursor=[A-Za-z0-9_-]+$`));
      path = links.next;
    }
    assert.deepEqual(
      seen.map((page) => page.length),
      [3, 3, 1],
    );
    assert.deepEqual(seen.flat(), newestFirst, 'every active file once, newest first; the blocked one never');

    // Without a limit: 50 per page, so all seven and no next link.
    const whole = await showFolder(owner, folder);
    assert.equal(asArray(assertAtomOk(whole, 200, 'Folder').entry['ed:file']).length, 7);
    assert.equal(feedLinks(whole.body).next, null);
  });

  test('a bad limit or cursor is 400 errorBadRequest', async () => {
    const folder = await newFolder(owner, 'bad paging');
    const get = async (query: string) => read(await t.fetch(`/folders/${folder}?${query}`, { headers: { Authorization: owner.key } }));
    for (const query of ['limit=0', 'limit=501', 'limit=abc', 'limit=1&limit=2', 'cursor=', 'cursor=nonsense', 'cursor=a&cursor=b']) {
      assertAtomError(await get(query), 400, 'errorBadRequest');
    }
  });
});

describe('DELETE /folders/<id>', () => {
  test('a folder holding a file: 409 errorFolderNotEmpty, folder and file kept', async () => {
    const folder = await newFolder(owner, 'full');
    const a = await upload(owner);
    assertAtomOk(await move(owner, folder, [a.id]), 200, 'Add files to folder');
    assertAtomError(await deleteFolder(owner, folder), 409, 'errorFolderNotEmpty');
    assert.ok(await t.server.services.store.folders.byId(folder));
    assert.equal(await folderOf(a.id), folder);
    // A blocked file still counts.
    await t.server.services.files.block(a.id);
    assertAtomError(await deleteFolder(owner, folder), 409, 'errorFolderNotEmpty');
  });

  test('a folder holding a sub-folder: 409 errorFolderNotEmpty', async () => {
    const parent = await newFolder(owner, 'parent');
    await newFolder(owner, 'child', parent);
    assertAtomError(await deleteFolder(owner, parent), 409, 'errorFolderNotEmpty');
    assert.ok(await t.server.services.store.folders.byId(parent));
  });

  test('an empty folder: 200, then 404 errorFolderNotFound for every call', async () => {
    const folder = await newFolder(owner, 'going');
    const response = await deleteFolder(owner, folder);
    assert.equal(response.status, 200, response.body);
    assert.equal(await t.server.services.store.folders.byId(folder), null);
    assertAtomError(await deleteFolder(owner, folder), 404, 'errorFolderNotFound');
    assertAtomError(await showFolder(owner, folder), 404, 'errorFolderNotFound');
    const a = await upload(owner);
    assertAtomError(await move(owner, folder, [a.id]), 404, 'errorFolderNotFound');
  });

  test('a folder whose files are all deleted counts as empty', async () => {
    const folder = await newFolder(owner, 'was full');
    const a = await upload(owner);
    assertAtomOk(await move(owner, folder, [a.id]), 200, 'Add files to folder');
    assert.equal((await read(await t.fetch(`/files/${a.id}`, { method: 'DELETE', headers: { Authorization: owner.key } }))).status, 200);
    assert.equal((await deleteFolder(owner, folder)).status, 200);
  });

  test("another account's folder: 403 errorPermissionDenied, kept", async () => {
    const theirs = await newFolder(other, 'not yours');
    assertAtomError(await deleteFolder(owner, theirs), 403, 'errorPermissionDenied');
    assert.ok(await t.server.services.store.folders.byId(theirs));
  });
});

describe('PUT /folders/<id>;files', () => {
  test("moves the listed files: ed:updated = number listed, length = the folder's active bytes", async () => {
    const folder = await newFolder(owner, 'target');
    const a = await upload(owner, '12345');
    const b = await upload(owner, '1234567');
    const feed = assertAtomOk(await move(owner, folder, [a.id, b.id]), 200, 'Add files to folder');
    assert.equal(feed.entry.id, folder);
    assert.equal(feed.entry['ed:updated'], '2');
    const link = linkTitled(feed.entry, 'folder_link');
    assert.equal(link['@href'], `${t.server.webUrl}/folder/${folder}`);
    assert.equal(link['@rel'], 'enclosure');
    assert.equal(link['@length'], String(a.size + b.size));
    assert.equal(await folderOf(a.id), folder);
    assert.equal(await folderOf(b.id), folder);

    // A second move adds to what is there; length counts the whole folder.
    const c = await upload(owner, '123');
    const second = assertAtomOk(await move(owner, folder, [c.id]), 200, 'Add files to folder');
    assert.equal(second.entry['ed:updated'], '1');
    assert.equal(linkTitled(second.entry, 'folder_link')['@length'], String(a.size + b.size + c.size));
  });

  test('a file moves out of its previous folder; files already there count as listed', async () => {
    const first = await newFolder(owner, 'first');
    const second = await newFolder(owner, 'second');
    const a = await upload(owner, 'abc');
    const b = await upload(owner, 'defg');
    assertAtomOk(await move(owner, first, [a.id, b.id]), 200, 'Add files to folder');
    const feed = assertAtomOk(await move(owner, second, [a.id]), 200, 'Add files to folder');
    assert.equal(linkTitled(feed.entry, 'folder_link')['@length'], String(a.size));
    assert.equal(await folderOf(a.id), second);
    assert.equal(await folderOf(b.id), first);
    const again = assertAtomOk(await move(owner, second, [a.id]), 200, 'Add files to folder');
    assert.equal(again.entry['ed:updated'], '1');
    assert.equal(await folderOf(a.id), second);
  });

  test('a blocked file of the caller may be moved; length counts active bytes only', async () => {
    const folder = await newFolder(owner, 'with blocked');
    const a = await upload(owner, 'active!');
    const blocked = await upload(owner, 'blocked file bytes');
    await t.server.services.files.block(blocked.id);
    const feed = assertAtomOk(await move(owner, folder, [a.id, blocked.id]), 200, 'Add files to folder');
    assert.equal(feed.entry['ed:updated'], '2');
    assert.equal(linkTitled(feed.entry, 'folder_link')['@length'], String(a.size));
    assert.equal(await folderOf(blocked.id), folder);
  });

  describe('all or nothing: 422 errorFolderFilesAddFailed and no file moves', () => {
    let target: string;
    let previous: string;
    let mine: { id: string; size: number };
    let mineInFolder: { id: string; size: number };
    before(async () => {
      target = await newFolder(owner, 'target');
      previous = await newFolder(owner, 'previous');
      mine = await upload(owner);
      mineInFolder = await upload(owner);
      assertAtomOk(await move(owner, previous, [mineInFolder.id]), 200, 'Add files to folder');
    });

    async function assertNothingMoved(ids: string[], expected: Record<string, string | null | undefined>) {
      const response = await move(owner, target, ids);
      assertAtomError(response, 422, 'errorFolderFilesAddFailed');
      for (const [id, folder] of Object.entries(expected)) assert.equal(await folderOf(id), folder, `file ${id} moved`);
      const listing = assertAtomOk(await showFolder(owner, target), 200, 'Folder');
      assert.equal(linkTitled(listing.entry, 'folder_link')['@length'], '0');
    }

    test('an unknown id among good ones', async () => {
      await assertNothingMoved([mine.id, 'ZZZZZZZZZZ', mineInFolder.id], { [mine.id]: null, [mineInFolder.id]: previous });
    });

    test("another account's file among good ones; theirs stays put", async () => {
      const theirs = await upload(other);
      await assertNothingMoved([mine.id, theirs.id, mineInFolder.id], { [mine.id]: null, [mineInFolder.id]: previous, [theirs.id]: null });
    });

    test('a deleted file among good ones', async () => {
      const gone = await upload(owner);
      const deleted = await read(await t.fetch(`/files/${gone.id}`, { method: 'DELETE', headers: { Authorization: owner.key } }));
      assert.equal(deleted.status, 200);
      await assertNothingMoved([mine.id, mineInFolder.id, gone.id], { [mine.id]: null, [mineInFolder.id]: previous, [gone.id]: null });
    });

    test('a duplicate id', async () => {
      await assertNothingMoved([mine.id, mineInFolder.id, mine.id], { [mine.id]: null, [mineInFolder.id]: previous });
    });

    test('a malformed id (lower case, too long, path-like, empty)', async () => {
      for (const bad of [mine.id.toLowerCase(), `${mine.id}X`, '../x', '', ' ']) {
        await assertNothingMoved([mineInFolder.id, bad, mine.id], { [mine.id]: null, [mineInFolder.id]: previous });
      }
    });

    test('an empty list (no files fields at all)', async () => {
      await assertNothingMoved([], { [mine.id]: null, [mineInFolder.id]: previous });
      const onlyMethod = await read(
        await t.fetch(`/folders/${target};files`, { method: 'POST', headers: { Authorization: owner.key }, body: form({ _method: 'PUT' }) }),
      );
      assertAtomError(onlyMethod, 422, 'errorFolderFilesAddFailed');
      const noBody = await read(await t.fetch(`/folders/${target};files`, { method: 'PUT', headers: { Authorization: owner.key } }));
      assertAtomError(noBody, 422, 'errorFolderFilesAddFailed');
    });
  });

  test('an unknown folder: 404 errorFolderNotFound, nothing moved', async () => {
    const a = await upload(owner);
    assertAtomError(await move(owner, 'ZZZZZZZZZZ', [a.id]), 404, 'errorFolderNotFound');
    assert.equal(await folderOf(a.id), null);
  });

  test('a folder deleted between the ownership check and the move: 404 errorFolderNotFound, nothing moved', async () => {
    const folder = await newFolder(owner, 'vanishing');
    const a = await upload(owner);
    // The DELETE /folders/<id> lands right after the move read the folder.
    const restore = removeAfterFirstRead(folder);
    try {
      assertAtomError(await move(owner, folder, [a.id]), 404, 'errorFolderNotFound');
    } finally {
      restore();
    }
    assert.equal(await folderOf(a.id), null);
    assert.equal(await t.server.services.store.folders.byId(folder), null);
  });

  test("another account's folder: 403 errorPermissionDenied, nothing moved (not even its owner's files)", async () => {
    const theirs = await newFolder(other, 'theirs');
    const a = await upload(owner);
    const b = await upload(other);
    assertAtomError(await move(owner, theirs, [a.id]), 403, 'errorPermissionDenied');
    assertAtomError(await move(owner, theirs, [b.id]), 403, 'errorPermissionDenied');
    assert.equal(await folderOf(a.id), null);
    assert.equal(await folderOf(b.id), null);
  });
});
