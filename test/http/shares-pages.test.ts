// The share page for people (issue 25): what a file share and a folder share show, names
// escaped, browsing below the shared folder and never above it, errors as pages.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertAtomError, form, type ReadResponse, read } from '../helpers/api-checks.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

let t: TestServer;
let owner: TestAccount;
before(async () => {
  t = await startTestServer();
  owner = await t.account();
});
after(() => t.close());

const share = async (fields: Record<string, string>) => {
  const response = await read(await t.fetch('/shares', { method: 'POST', headers: { Authorization: owner.key }, body: form(fields) }));
  assert.equal(response.status, 201, response.body);
  return /<entry>\s*<id>([A-Za-z0-9]{22})<\/id>/.exec(response.body)![1]!;
};
const page = async (path: string): Promise<ReadResponse> => read(await t.fetch(path, { headers: { Accept: 'text/html' } }));

test('a file share: its name (escaped), size, limits and one download button', async () => {
  const up = await t.upload(owner.key, '<img src=x onerror=alert(1)>.txt', 'twelve bytes');
  const id = await share({ file: up.id, expires_in: '3600', max_downloads: '3' });
  const shown = await page(`/s/${id}`);
  assert.equal(shown.status, 200);
  assert.match(shown.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(shown.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  assert.equal(shown.headers.get('cache-control'), 'no-store');
  assert.match(shown.body, /<h1>&lt;img src=x onerror=alert\(1\)&gt;\.txt<\/h1>/);
  assert.doesNotMatch(shown.body, /<img src=x/);
  assert.match(shown.body, /12 B · shared file/);
  assert.match(shown.body, /3 downloads left\./);
  assert.match(shown.body, /This link expires \d{4}-\d\d-\d\d \d\d:\d\d UTC\./);
  assert.equal([...shown.body.matchAll(new RegExp(`href="/s/${id}/download"`, 'g'))].length, 1);
  // Looking at the page is no download.
  assert.equal((await t.server.services.store.shares.byId(id))!.downloads, 0);
});

test('a folder share: its files and sub-folders, a download per file, one ZIP; below it yes, above or beside it no', async () => {
  const { folders } = t.server.services;
  const parent = await folders.create(owner.account, 'Private parent');
  const top = await folders.create(owner.account, 'Shared & co', parent.id);
  const sub = await folders.create(owner.account, 'Sub <one>', top.id);
  const beside = await folders.create(owner.account, 'Beside', parent.id);
  const a = await t.upload(owner.key, 'a.txt', 'aaaa');
  const b = await t.upload(owner.key, 'b.txt', 'bbbbbbbb');
  const hidden = await t.upload(owner.key, 'hidden.txt', 'not shared');
  const blocked = await t.upload(owner.key, 'blocked.txt', 'blocked');
  await folders.move(owner.account, top.id, [a.id, blocked.id]);
  await folders.move(owner.account, sub.id, [b.id]);
  await folders.move(owner.account, parent.id, [hidden.id]);
  await t.server.services.files.block(blocked.id);
  const id = await share({ folder: top.id });
  const ref = (kind: 'file' | 'folder', of: string) => t.server.services.shares.ref({ id }, kind, of);

  const shown = await page(`/s/${id}`);
  assert.equal(shown.status, 200);
  assert.match(shown.body, /<h1>Shared &amp; co<\/h1>/);
  assert.match(shown.body, /1 file · 4 B · shared folder/);
  assert.match(shown.body, new RegExp(`<a class="button" href="/s/${id}/download" download>Download all as ZIP</a>`));
  assert.match(shown.body, new RegExp(`<a class="folder-link" href="/s/${id}\\?folder=${ref('folder', sub.id)}">Sub &lt;one&gt;</a>`));
  assert.match(shown.body, new RegExp(`<a href="/s/${id}/download/${ref('file', a.id)}" download>a.txt</a>`));
  for (const absent of ['blocked.txt', 'hidden.txt', 'Private parent', 'Beside', parent.id]) assert.ok(!shown.body.includes(absent), absent);

  const below = await page(`/s/${id}?folder=${ref('folder', sub.id)}`);
  assert.equal(below.status, 200);
  assert.match(below.body, /<h1>Sub &lt;one&gt;<\/h1>/);
  assert.match(below.body, new RegExp(`<a href="/s/${id}/download/${ref('file', b.id)}" download>b.txt</a>`));
  assert.match(below.body, new RegExp(`<a href="/s/${id}">Back to Shared &amp; co</a>`));
  assert.doesNotMatch(below.body, /Download all as ZIP/);

  for (const outside of [ref('folder', parent.id), ref('folder', beside.id), sub.id, ref('file', sub.id), 'ZZZZZZZZZZ', '../x']) {
    const refused = await page(`/s/${id}?folder=${encodeURIComponent(outside)}`);
    assert.equal(refused.status, 404, outside);
    assert.doesNotMatch(refused.body, /Private parent|Beside|hidden\.txt/);
  }
});

test('errors on the page are pages for people; on the downloads, Atom', async () => {
  const unknown = await page('/s/AAAAAAAAAAAAAAAAAAAAAA');
  assert.equal(unknown.status, 404);
  assert.match(unknown.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(unknown.body, /Share does not exist or was revoked/);
  const download = await page('/s/AAAAAAAAAAAAAAAAAAAAAA/download');
  assert.equal(download.status, 404);
  assert.equal(download.headers.get('content-type'), 'application/atom+xml; charset=utf-8');
  assert.match(download.body, /<title>errorShareNotFound<\/title>/);
});

test('a folder share names nothing inside it by its id: share references only, useless on another share and after revocation', async () => {
  const { folders } = t.server.services;
  const top = await folders.create(owner.account, 'Top');
  const sub = await folders.create(owner.account, 'Sub', top.id);
  const deeper = await folders.create(owner.account, 'Deeper', sub.id);
  const readme = await t.upload(owner.key, 'readme.txt', 'read me');
  const secret = await t.upload(owner.key, 'secret.txt', 'the secret');
  await folders.move(owner.account, top.id, [readme.id]);
  await folders.move(owner.account, sub.id, [secret.id]);
  const treeIds = [top.id, sub.id, deeper.id, readme.id, secret.id];
  const id = await share({ folder: top.id, password: 'pw', max_downloads: '1' });
  const other = await share({ folder: top.id });

  const opened = await t.fetch(`/s/${id}`, { method: 'POST', body: form({ password: 'pw' }), redirect: 'manual' });
  assert.equal(opened.status, 303);
  const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0]!;
  const view = async (path: string) => read(await t.fetch(path, { headers: { Accept: 'text/html', Cookie: cookie } }));
  const learnt = new Set<string>();
  /** The page, checked to name no id of the tree (body or headers); the references it links to are learnt. */
  const readPage = async (path: string, open = view) => {
    const shown = await open(path);
    assert.equal(shown.status, 200, path);
    const everything = `${shown.body}\n${[...shown.headers].join('\n')}`;
    for (const treeId of treeIds) assert.ok(!everything.includes(treeId), `${path} names ${treeId}`);
    for (const match of shown.body.matchAll(/(?:\?folder=|\/download\/)([A-Za-z0-9_-]+)/g)) learnt.add(match[1]!);
    return shown.body;
  };
  const refIn = (body: string, pattern: string) => {
    const found = new RegExp(pattern).exec(body);
    assert.ok(found, pattern);
    return found[1]!;
  };

  const topPage = await readPage(`/s/${id}`);
  const subRef = refIn(topPage, `href="/s/${id}\\?folder=([A-Za-z0-9_-]{22})">Sub</a>`);
  const readmeRef = refIn(topPage, `href="/s/${id}/download/([A-Za-z0-9_-]{22})" download>readme.txt</a>`);
  const subPage = await readPage(`/s/${id}?folder=${subRef}`);
  const deeperRef = refIn(subPage, `href="/s/${id}\\?folder=([A-Za-z0-9_-]{22})">Deeper</a>`);
  const secretRef = refIn(subPage, `href="/s/${id}/download/([A-Za-z0-9_-]{22})" download>secret.txt</a>`);
  assert.match(await readPage(`/s/${id}?folder=${deeperRef}`), /This folder is empty\./);
  assert.equal(learnt.size, 4, [...learnt].join(' '));

  // The references work: a file below, in the header too (a script's way).
  const got = await read(await t.fetch(`/s/${id}/download/${secretRef}`, { headers: { 'Filehaven-Share-Password': 'pw' } }));
  assert.equal(got.status, 200);
  assert.equal(got.body, 'the secret');
  assert.ok(!(got.headers.get('content-disposition') ?? '').includes(secret.id));

  // Another share of the same folder: its own references; the first share's, and real ids, are not found.
  const otherTop = await readPage(`/s/${other}`, page);
  const otherSubRef = refIn(otherTop, `href="/s/${other}\\?folder=([A-Za-z0-9_-]{22})">Sub</a>`);
  assert.notEqual(otherSubRef, subRef);
  assert.match(await readPage(`/s/${other}?folder=${otherSubRef}`, page), />secret\.txt</);
  for (const foreign of [readmeRef, secretRef, readme.id, secret.id, subRef, otherSubRef]) {
    assertAtomError(await read(await t.fetch(`/s/${other}/download/${foreign}`)), 404, 'errorFileNotFound');
  }
  for (const foreign of [subRef, deeperRef, sub.id, deeper.id, top.id]) {
    const refused = await page(`/s/${other}?folder=${foreign}`);
    assert.equal(refused.status, 404, foreign);
    assert.doesNotMatch(refused.body, /secret\.txt/);
  }
  // A cursor of the old kind (a real id in base64url) is refused, not read.
  assert.equal((await page(`/s/${other}?cursor=${Buffer.from(`f:0:${readme.id}`).toString('base64url')}`)).status, 400);

  // Revoked: nothing learnt from the page opens anything, on the share or as a public link.
  const revoked = await t.fetch(`/shares/${id}`, { method: 'DELETE', headers: { Authorization: owner.key } });
  assert.equal(revoked.status, 200);
  for (const ref of learnt) {
    assertAtomError(await read(await t.fetch(`/s/${id}/download/${ref}`, { headers: { Cookie: cookie } })), 404, 'errorShareNotFound');
    assert.equal((await view(`/s/${id}?folder=${ref}`)).status, 404, ref);
    for (const path of [`/${ref}/secret.txt`, `/${ref}/readme.txt`, `/folder/${ref}`, `/${ref}`]) {
      assert.equal((await page(path)).status, 404, path);
    }
  }
});
