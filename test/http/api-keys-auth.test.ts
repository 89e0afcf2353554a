// POST /apikeys and the Authorization header (SPEC.md "POST /apikeys", "Authentication";
// API.md sections 2, 3 and 5).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, assertAtomOk, form, type ReadResponse, read } from '../helpers/api-checks.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const PASSWORD = 'correct horse battery';

async function postApiKeys(body: URLSearchParams | FormData): Promise<ReadResponse> {
  return read(await t.fetch('/apikeys', { method: 'POST', body }));
}

/** The key of a successful POST /apikeys, checking the exact entry of API.md 3. */
function keyOf(response: ReadResponse): string {
  const feed = assertAtomOk(response, 201, 'ApiKey');
  assert.equal(feed.entry.title, 'apikey');
  assert.equal(feed.entry.content['@type'], 'text');
  const match = /\n {2}<entry>\n {4}<title>apikey<\/title>\n {4}<content type="text">([^<]+)<\/content>\n {2}<\/entry>\n/.exec(response.body);
  assert.ok(match, `entry is not exactly the golden one:\n${response.body}`);
  assert.equal(feed.entry.content['#text'], match[1]);
  return match[1]!;
}

async function createAccount(login: string, premiumDays?: number) {
  return t.server.services.accounts.create({ login, password: PASSWORD, premiumDays });
}

describe('POST /apikeys', () => {
  test('login + password returns a key that authenticates, and the same key on every call', async () => {
    await createAccount('keys-same');
    const first = keyOf(await postApiKeys(form({ login: 'keys-same', password: PASSWORD })));
    const second = keyOf(await postApiKeys(form({ login: 'keys-same', password: PASSWORD })));
    const third = keyOf(await postApiKeys(form({ login: 'keys-same', pass: PASSWORD })));
    assert.equal(second, first);
    assert.equal(third, first);
    const account = await read(await t.fetch('/account', { headers: { Authorization: first } }));
    assertAtomOk(account, 200, 'Account Info');
  });

  test('the pass alias works on a first call too', async () => {
    await createAccount('keys-pass');
    const key = keyOf(await postApiKeys(form({ login: 'keys-pass', pass: PASSWORD })));
    const again = keyOf(await postApiKeys(form({ login: 'keys-pass', password: PASSWORD })));
    assert.equal(again, key);
  });

  test('the key has at least 128 bits: long enough for its alphabet, and keys differ between accounts', async () => {
    await createAccount('keys-bits-1');
    await createAccount('keys-bits-2');
    const a = keyOf(await postApiKeys(form({ login: 'keys-bits-1', password: PASSWORD })));
    const b = keyOf(await postApiKeys(form({ login: 'keys-bits-2', password: PASSWORD })));
    assert.notEqual(a, b);
    for (const key of [a, b]) {
      // Each character of the key's alphabet carries log2(alphabet size) bits at most.
      let alphabet: number;
      if (/^[0-9a-f]+$/.test(key)) alphabet = 16;
      else if (/^[A-Za-z0-9]+$/.test(key)) alphabet = 62;
      else if (/^[A-Za-z0-9_-]+$/.test(key)) alphabet = 64;
      else assert.fail(`key ${key} uses characters outside a URL- and regex-safe alphabet`);
      assert.ok(key.length * Math.log2(alphabet) >= 128, `key ${key} (${key.length} characters of ${alphabet}) is under 128 bits`);
    }
  });

  test('wrong password: 401 errorWrongCredentials "Invalid login or password"', async () => {
    await createAccount('keys-wrong');
    assertAtomError(await postApiKeys(form({ login: 'keys-wrong', password: 'not the password' })), 401, 'errorWrongCredentials', 'Invalid login or password');
    assertAtomError(await postApiKeys(form({ login: 'keys-wrong', pass: 'not the password' })), 401, 'errorWrongCredentials', 'Invalid login or password');
    // A wrong `password` is not rescued by a right `pass`: password wins.
    assertAtomError(
      await postApiKeys(form({ login: 'keys-wrong', password: 'nope-nope', pass: PASSWORD })),
      401,
      'errorWrongCredentials',
      'Invalid login or password',
    );
    assertAtomError(await postApiKeys(form({ login: 'keys-wrong' })), 401, 'errorWrongCredentials', 'Invalid login or password');
  });

  test('credentials in the query string are not read (they would land in access logs)', async () => {
    await createAccount('keys-query');
    const query = new URLSearchParams({ login: 'keys-query', password: PASSWORD });
    assertAtomError(await read(await t.fetch(`/apikeys?${query}`, { method: 'POST' })), 401, 'errorWrongCredentials', 'Invalid login or password');
  });

  test('unknown login: the same 401 as a wrong password', async () => {
    assertAtomError(await postApiKeys(form({ login: 'no-such-login', password: PASSWORD })), 401, 'errorWrongCredentials', 'Invalid login or password');
    assertAtomError(await postApiKeys(form({})), 401, 'errorWrongCredentials', 'Invalid login or password');
  });

  test('create=1 when a key exists: 409 errorApiKeyAlreadyCreated, and the key is unchanged', async () => {
    await createAccount('keys-create');
    const key = keyOf(await postApiKeys(form({ login: 'keys-create', password: PASSWORD })));
    assertAtomError(await postApiKeys(form({ login: 'keys-create', password: PASSWORD, create: '1' })), 409, 'errorApiKeyAlreadyCreated');
    assert.equal(keyOf(await postApiKeys(form({ login: 'keys-create', password: PASSWORD }))), key);
    // The conflict is only for the right credentials.
    assertAtomError(await postApiKeys(form({ login: 'keys-create', password: 'wrong-wrong', create: '1' })), 401, 'errorWrongCredentials');
  });

  test('create=1 on an account without a key creates it', async () => {
    await createAccount('keys-create-first');
    const key = keyOf(await postApiKeys(form({ login: 'keys-create-first', password: PASSWORD, create: '1' })));
    assert.equal(keyOf(await postApiKeys(form({ login: 'keys-create-first', password: PASSWORD }))), key);
  });

  test('the form may be sent as multipart/form-data', async () => {
    await createAccount('keys-multipart');
    const urlencoded = keyOf(await postApiKeys(form({ login: 'keys-multipart', password: PASSWORD })));
    const body = new FormData();
    body.append('login', 'keys-multipart');
    body.append('password', PASSWORD);
    assert.equal(keyOf(await postApiKeys(body)), urlencoded);
    const alias = new FormData();
    alias.append('login', 'keys-multipart');
    alias.append('pass', PASSWORD);
    assert.equal(keyOf(await postApiKeys(alias)), urlencoded);
    const wrong = new FormData();
    wrong.append('login', 'keys-multipart');
    wrong.append('password', 'wrong-wrong');
    assertAtomError(await postApiKeys(wrong), 401, 'errorWrongCredentials', 'Invalid login or password');
  });

  test('_method=POST is accepted; GET /apikeys is 405', async () => {
    await createAccount('keys-method');
    keyOf(await postApiKeys(form({ login: 'keys-method', password: PASSWORD, _method: 'POST' })));
    const response = await read(await t.fetch('/apikeys'));
    assertAtomError(response, 405, 'errorMethodNotAllowed');
    assert.match(response.headers.get('allow') ?? '', /\bPOST\b/);
  });
});

describe('Authorization', () => {
  let key: string;
  let fileId: string;
  let folderId: string;
  before(async () => {
    ({ key } = await t.account({ premiumDays: 30 }));
    const up = await t.upload(key, 'auth.txt', 'auth test');
    assert.equal(up.response.status, 201, up.body);
    fileId = up.id;
    const folder = await read(await t.fetch('/folders', { method: 'POST', headers: { Authorization: key }, body: form({ name: 'auth' }) }));
    folderId = assertAtomOk(folder, 201, 'Folder').entry.id;
  });

  /** Every authenticated endpoint, on resources that exist, so only the key is wrong. */
  const endpoints = (): Array<[string, string, () => BodyInit | undefined]> => [
    ['GET', '/account', () => undefined],
    ['GET', `/files/${fileId}`, () => undefined],
    ['GET', `/files/${fileId};DirectLink`, () => undefined],
    ['POST', `/files/copy/${fileId}`, () => undefined],
    ['POST', `/files/copy:${fileId}`, () => undefined],
    ['DELETE', `/files/${fileId}`, () => undefined],
    ['PUT', `/folders/${folderId};files`, () => form({ 'files[0]': fileId })],
    ['POST', '/folders', () => form({ name: 'x' })],
    ['GET', `/folders/${folderId}`, () => undefined],
    ['GET', '/files', () => undefined],
    ['GET', '/folders', () => undefined],
    ['DELETE', `/folders/${folderId}`, () => undefined],
    [
      'POST',
      '/files',
      () => {
        const body = new FormData();
        body.append('upload', new Blob(['x']), 'x.txt');
        return body;
      },
    ],
    [
      'POST',
      '/file',
      () => {
        const body = new FormData();
        body.append('upload', new Blob(['x']), 'x.txt');
        return body;
      },
    ],
  ];

  const variants: Array<[string, Record<string, string>]> = [
    ['missing', {}],
    ['empty', { Authorization: '' }],
    ['unknown', { Authorization: 'A'.repeat(32) }],
    ['unknown Bearer', { Authorization: `Bearer ${'b'.repeat(32)}` }],
    ['too short', { Authorization: 'x' }],
  ];

  for (const [label, headers] of variants) {
    test(`${label} key: 401 errorPermissionDenied "Wrong apikey" on every authenticated endpoint`, async () => {
      for (const [method, path, body] of endpoints()) {
        const response = await read(await t.fetch(path, { method, headers, body: body() }));
        assert.equal(response.status, 401, `${method} ${path}: ${response.body}`);
        assertAtomError(response, 401, 'errorPermissionDenied', 'Wrong apikey');
      }
      // Nothing happened under the bad key.
      assert.equal((await t.server.services.store.files.byId(fileId))?.status, 'A');
      assert.equal((await t.server.services.store.files.byId(fileId))?.folderId, null);
      assert.ok(await t.server.services.store.folders.byId(folderId));
    });
  }

  test('a key of another account is not taken for this one, and a password is not a key', async () => {
    const { password } = await t.account();
    assertAtomError(await read(await t.fetch('/account', { headers: { Authorization: password } })), 401, 'errorPermissionDenied', 'Wrong apikey');
  });

  test('Authorization: Bearer <key> works as the bare key does', async () => {
    for (const header of [key, `Bearer ${key}`, `bearer ${key}`]) {
      const account = await read(await t.fetch('/account', { headers: { Authorization: header } }));
      assertAtomOk(account, 200, 'Account Info');
      const details = await read(await t.fetch(`/files/${fileId}`, { headers: { Authorization: header } }));
      assert.equal(assertAtomOk(details, 200, 'File Full info').entry.id, fileId);
    }
  });
});
