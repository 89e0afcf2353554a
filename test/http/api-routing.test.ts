// Method override, 405, 404 and path forms (SPEC.md "General conventions"; API.md 2 and 3).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, assertAtomOk, filesForm, form, rawRequest, read } from '../helpers/api-checks.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let key: string;
before(async () => {
  t = await startTestServer();
  ({ key } = await t.account({ premiumDays: 30 }));
});
after(() => t.close());

const auth = () => ({ Authorization: key });
const fileRow = (id: string) => t.server.services.store.files.byId(id);

async function upload(name = 'routing.txt', content = `content of ${name}`): Promise<string> {
  const up = await t.upload(key, name, content);
  assert.equal(up.response.status, 201, up.body);
  return up.id;
}

async function newFolder(name = 'routing'): Promise<string> {
  const response = await read(await t.fetch('/folders', { method: 'POST', headers: auth(), body: form({ name }) }));
  return assertAtomOk(response, 201, 'Folder').entry.id;
}

describe('_method override', () => {
  test('POST /folders/<id>;files with _method=PUT as a form field moves the files', async () => {
    const folder = await newFolder();
    const a = await upload('m1.txt');
    const b = await upload('m2.txt');
    const response = await read(await t.fetch(`/folders/${folder};files`, { method: 'POST', headers: auth(), body: filesForm([a, b], { _method: 'PUT' }) }));
    assert.equal(assertAtomOk(response, 200, 'Add files to folder').entry['ed:updated'], '2');
    assert.equal((await fileRow(a))?.folderId, folder);
    assert.equal((await fileRow(b))?.folderId, folder);
  });

  test('POST /folders/<id>;files with ?_method=PUT in the query moves the files', async () => {
    const folder = await newFolder();
    const a = await upload('q1.txt');
    const response = await read(await t.fetch(`/folders/${folder};files?_method=PUT`, { method: 'POST', headers: auth(), body: filesForm([a]) }));
    assert.equal(assertAtomOk(response, 200, 'Add files to folder').entry['ed:updated'], '1');
    assert.equal((await fileRow(a))?.folderId, folder);
  });

  test('_method=PUT as a multipart field works too; lower case is accepted', async () => {
    const folder = await newFolder();
    const a = await upload('mp.txt');
    const body = new FormData();
    body.append('_method', 'put');
    body.append('files[0]', a);
    const response = await read(await t.fetch(`/folders/${folder};files`, { method: 'POST', headers: auth(), body }));
    assertAtomOk(response, 200, 'Add files to folder');
    assert.equal((await fileRow(a))?.folderId, folder);
  });

  test('a plain POST to /folders/<id>;files (no override) is 405 and moves nothing', async () => {
    const folder = await newFolder();
    const a = await upload('plain.txt');
    const response = await read(await t.fetch(`/folders/${folder};files`, { method: 'POST', headers: auth(), body: filesForm([a]) }));
    assertAtomError(response, 405, 'errorMethodNotAllowed');
    assert.match(response.headers.get('allow') ?? '', /\bPUT\b/);
    assert.equal((await fileRow(a))?.folderId, null);
  });

  test('POST /files/<id> with _method=DELETE (form field, then query) deletes the file', async () => {
    const a = await upload('del-form.txt');
    const viaForm = await read(await t.fetch(`/files/${a}`, { method: 'POST', headers: auth(), body: form({ _method: 'DELETE' }) }));
    assert.equal(viaForm.status, 200, viaForm.body);
    assert.equal((await fileRow(a))?.status, 'D');

    const b = await upload('del-query.txt');
    const viaQuery = await read(await t.fetch(`/files/${b}?_method=DELETE`, { method: 'POST', headers: auth() }));
    assert.equal(viaQuery.status, 200, viaQuery.body);
    assert.equal((await fileRow(b))?.status, 'D');
  });

  test('POST /folders/<id> with _method=DELETE (form field, then query) deletes the folder', async () => {
    const a = await newFolder('del-a');
    const viaForm = await read(await t.fetch(`/folders/${a}`, { method: 'POST', headers: auth(), body: form({ _method: 'DELETE' }) }));
    assert.equal(viaForm.status, 200, viaForm.body);
    assert.equal(await t.server.services.store.folders.byId(a), null);

    const b = await newFolder('del-b');
    const viaQuery = await read(await t.fetch(`/folders/${b}?_method=DELETE`, { method: 'POST', headers: auth() }));
    assert.equal(viaQuery.status, 200, viaQuery.body);
    assert.equal(await t.server.services.store.folders.byId(b), null);
  });

  test('_method on a GET is ignored: the GET is served and nothing is deleted', async () => {
    const a = await upload('get-ignored.txt');
    const response = await read(await t.fetch(`/files/${a}?_method=DELETE`, { headers: auth() }));
    assert.equal(assertAtomOk(response, 200, 'File Full info').entry.id, a);
    assert.equal((await fileRow(a))?.status, 'A');

    const folder = await newFolder('get-ignored');
    const listing = await read(await t.fetch(`/folders/${folder}?_method=DELETE`, { headers: auth() }));
    assertAtomOk(listing, 200, 'Folder');
    assert.ok(await t.server.services.store.folders.byId(folder));
  });

  test('a POST with _method naming an unsupported method is 405 with Allow', async () => {
    const a = await upload('patch.txt');
    for (const override of ['PATCH', 'GET', 'bogus']) {
      const response = await read(await t.fetch(`/files/${a}`, { method: 'POST', headers: auth(), body: form({ _method: override }) }));
      assertAtomError(response, 405, 'errorMethodNotAllowed');
      assert.ok(response.headers.get('allow'), 'Allow header');
    }
    assert.equal((await fileRow(a))?.status, 'A');
  });
});

describe('405 and 404', () => {
  test('an unsupported method is 405 errorMethodNotAllowed with an Allow header listing the methods', async () => {
    const a = await upload('405.txt');
    const folder = await newFolder('405');
    const cases: Array<[string, string, string[]]> = [
      ['DELETE', '/account', ['GET']],
      ['PUT', '/apikeys', ['POST']],
      ['PUT', '/files', ['GET', 'POST']],
      ['GET', '/file', ['POST']],
      ['PATCH', `/files/${a}`, ['GET', 'DELETE']],
      ['PUT', `/files/${a}`, ['GET', 'DELETE']],
      ['POST', `/files/${a};DirectLink`, ['GET']],
      ['GET', `/files/copy/${a}`, ['POST']],
      ['GET', `/files/copy:${a}`, ['POST']],
      ['GET', `/folders/${folder};files`, ['PUT']],
      ['DELETE', `/folders/${folder};files`, ['PUT']],
      ['PUT', `/folders/${folder}`, ['GET', 'DELETE']],
      ['DELETE', '/folders', ['GET', 'POST']],
    ];
    for (const [method, path, allowed] of cases) {
      const response = await read(await t.fetch(path, { method, headers: auth() }));
      assertAtomError(response, 405, 'errorMethodNotAllowed');
      const allow = (response.headers.get('allow') ?? '').split(/,\s*/);
      for (const m of allowed) assert.ok(allow.includes(m), `${method} ${path}: Allow "${allow.join(', ')}" lacks ${m}`);
      assert.ok(!allow.includes(method), `${method} ${path}: Allow lists the refused method`);
    }
    assert.equal((await fileRow(a))?.status, 'A');
  });

  test('an unknown path is 404 errorNotFound in Atom for curl-like clients', async () => {
    for (const accept of [undefined, '*/*', 'application/atom+xml']) {
      for (const path of ['/no-such-thing', '/files/x/y/z', '/folders/x/y', `/files/AAAAAAAAAA;Bogus`, '/accounts']) {
        const headers: Record<string, string> = { ...auth() };
        if (accept) headers.Accept = accept;
        assertAtomError(await read(await t.fetch(path, { headers })), 404, 'errorNotFound');
      }
    }
    assertAtomError(await read(await t.fetch('/no-such-thing', { method: 'POST', headers: auth(), body: form({ a: 'b' }) })), 404, 'errorNotFound');
  });

  test('an unknown path is an HTML page for Accept: text/html', async () => {
    const response = await read(await t.fetch('/no-such-thing', { headers: { Accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' } }));
    assert.equal(response.status, 404);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(response.body, /<html/i);
    assert.doesNotMatch(response.body, /<feed/);
  });
});

describe('path forms', () => {
  test(';DirectLink is routed with the ; raw and as %3B (either case)', async () => {
    const a = await upload('direct.txt');
    for (const path of [`/files/${a};DirectLink`, `/files/${a}%3BDirectLink`, `/files/${a}%3bDirectLink`]) {
      const response = await rawRequest(t.url, 'GET', path, { headers: auth() });
      const feed = assertAtomOk(response, 200, 'File info');
      assert.equal(feed.entry.id, a, path);
    }
  });

  test(';files is routed with the ; raw and as %3B', async () => {
    const a = await upload('semi-a.txt');
    const b = await upload('semi-b.txt');
    const folderRaw = await newFolder('raw');
    const folderEncoded = await newFolder('encoded');
    const body = (id: string) => filesForm([id]).toString();
    const headers = { ...auth(), 'Content-Type': 'application/x-www-form-urlencoded' };
    const raw = await rawRequest(t.url, 'PUT', `/folders/${folderRaw};files`, { headers, body: body(a) });
    assertAtomOk(raw, 200, 'Add files to folder');
    const encoded = await rawRequest(t.url, 'PUT', `/folders/${folderEncoded}%3Bfiles`, { headers, body: body(b) });
    assertAtomOk(encoded, 200, 'Add files to folder');
    assert.equal((await fileRow(a))?.folderId, folderRaw);
    assert.equal((await fileRow(b))?.folderId, folderEncoded);
  });

  test('POST /file is an alias of POST /files', async () => {
    const body = new FormData();
    body.append('upload', new Blob(['alias upload']), 'alias.txt');
    const response = await read(await t.fetch('/file', { method: 'POST', headers: auth(), body }));
    const feed = assertAtomOk(response, 201, 'File upload result');
    assert.equal(feed.entry.title, 'alias.txt');
    assert.equal(feed.entry['ed:size'], '12');
    assert.equal((await fileRow(feed.entry.id))?.status, 'A');
  });

  test('POST /files/copy:<id> is an alias of POST /files/copy/<id>', async () => {
    const a = await upload('copy-alias.txt');
    for (const path of [`/files/copy:${a}`, `/files/copy/${a}`]) {
      const response = await read(await t.fetch(path, { method: 'POST', headers: auth() }));
      const feed = assertAtomOk(response, 201, 'File copy');
      assert.notEqual(feed.entry.id, a);
      assert.equal((await fileRow(feed.entry.id))?.sha256, (await fileRow(a))?.sha256);
    }
  });
});

describe('ids that are not ids', () => {
  const notIds = ['abcdefghij', 'ABCDEFGHI', 'ABCDEFGHIJK', 'A'.repeat(300), '..', '..%2Fx', '%2E%2E%2Fx', '%00', 'A%20B', ''];

  test('file endpoints answer errorFileNotFound (404), never 500', async () => {
    for (const id of notIds) {
      const cases: Array<[string, string]> = [
        ['GET', `/files/${id}`],
        ['DELETE', `/files/${id}`],
        ['GET', `/files/${id};DirectLink`],
        ['GET', `/files/${id}%3BDirectLink`],
        ['POST', `/files/copy:${id}`],
        ['POST', `/files/copy/${id}`],
      ];
      for (const [method, path] of cases) {
        const response = await rawRequest(t.url, method, path, { headers: auth() });
        assertAtomError(response, 404, 'errorFileNotFound');
      }
    }
  });

  test('folder endpoints answer errorFolderNotFound (404), never 500', async () => {
    const a = await upload('not-id.txt');
    const headers = { ...auth(), 'Content-Type': 'application/x-www-form-urlencoded' };
    for (const id of notIds) {
      for (const [method, path] of [
        ['GET', `/folders/${id}`],
        ['DELETE', `/folders/${id}`],
        ['PUT', `/folders/${id};files`],
        ['PUT', `/folders/${id}%3Bfiles`],
      ] as const) {
        const response = await rawRequest(t.url, method, path, { headers, body: filesForm([a]).toString() });
        assertAtomError(response, 404, 'errorFolderNotFound');
      }
      if (id !== '') {
        const parent = await read(
          await t.fetch('/folders', { method: 'POST', headers: auth(), body: form({ name: 'child', parent: decodeURIComponent(id) }) }),
        );
        assertAtomError(parent, 404, 'errorFolderNotFound');
      }
    }
    assert.equal((await fileRow(a))?.folderId, null);
  });

  test('dot segments never reach a handler as an id', async () => {
    for (const path of ['/files/../x', '/files/./x', '/folders/../x']) {
      const response = await rawRequest(t.url, 'GET', path, { headers: auth() });
      assertAtomError(response, 404, 'errorNotFound');
    }
  });

  test('a URL the router cannot decode or take gets an Atom error, not JSON and not 500', async () => {
    for (const path of ['/files/%', '/files/%E0%A4%A', '/folders/%;files', '/files/%ZZ;DirectLink']) {
      assertAtomError(await rawRequest(t.url, 'GET', path, { headers: auth() }), 400, 'errorBadRequest', 'Malformed request URL');
    }
    // Longer than the router's parameter limit (2048): a 414, still Atom.
    assertAtomError(await rawRequest(t.url, 'GET', `/files/${'A'.repeat(3000)}`, { headers: auth() }), 414, 'errorBadRequest', 'Request URL too long');
  });
});
