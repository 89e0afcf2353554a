// Operator controls seen through the API: the blacklist by name and digest (API.md 8),
// blocked files (API.md 4), disabled accounts, new keys and passwords (API.md 5), balance.
// The operator side runs as the real CLI on the server's data folder (another process,
// as in production) or through the services in-process.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { FileStatus } from '../../src/domain/types.js';
import { assertAtomError, assertAtomOk, download, form, read } from '../helpers/api-checks.js';
import { assertOk, runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

/** The CLI on the test server's data folder (its secret is kept there: keys are sealed under it) and storage. */
const cli = (...args: string[]) => runCli([...args, '--data', t.dataDir], t.backendEnv);
const fileRowsWithDigest = (digest: string) => t.storage.count('files', { sha256: digest });
const getAccount = async (key: string) => read(await t.fetch('/account', { headers: { Authorization: key } }));
const getKey = async (login: string, password: string) => read(await t.fetch('/apikeys', { method: 'POST', body: form({ login, password }) }));
const keyOf = (body: string) => /<content type="text">([^<]+)<\/content>/.exec(body)?.[1];

describe('blacklist by file-name pattern', () => {
  test('an upload whose name matches is refused with 403 errorFileInBlackList and nothing is kept', async () => {
    assertOk(await cli('blacklist', 'add-name', '*.exe', '--reason', 'no executables'));
    const { key, account } = await t.account();
    const content = 'MZ pretend this is a program';

    for (const name of ['Setup.EXE', 'tool.exe']) {
      const { response, body } = await t.upload(key, name, content);
      assertAtomError({ status: response.status, headers: response.headers, body }, 403, 'errorFileInBlackList', 'File is in the black list');
    }
    assert.equal(await fileRowsWithDigest(sha256(content)), 0, 'no file row');
    assert.equal(await t.storage.keyOf(sha256(content)), null, 'no blob row');
    assert.deepEqual(await t.storage.leftovers(), [], 'no bytes stored without a row');
    assert.deepEqual(await t.server.services.store.files.list({ ownerId: account.id, limit: 10 }), []);

    // Only the whole name counts; the same bytes under another name are fine.
    const ok = await t.upload(key, 'setup.exe.txt', content);
    assert.equal(ok.response.status, 201, ok.body);
    assert.match(ok.body, /<title>setup\.exe\.txt<\/title>/);

    // Removing the pattern lets the name through again, at once.
    await t.server.services.moderation.removeNamePattern('*.EXE');
    assert.equal((await t.upload(key, 'Setup.EXE', content)).response.status, 201);
  });
});

describe('blacklist add --block-existing', () => {
  test('blocks every active file with the digest: details show B, pages and direct links 410, new uploads 403', async () => {
    const alice = await t.account({ premiumDays: 30, trafficBytes: 1_000_000 });
    const bob = await t.account();
    const content = 'content reported as abusive';
    const a = await t.upload(alice.key, 'a.bin', content);
    const b = await t.upload(bob.key, 'b.bin', content);
    const other = await t.upload(alice.key, 'other.bin', 'innocent content');
    for (const upload of [a, b, other]) assert.equal(upload.response.status, 201, upload.body);

    const out = assertOk(await cli('blacklist', 'add', sha256(content), '--block-existing', '--reason', 'abuse report'));
    assert.match(out, /blocked 2 existing files with this digest/);

    const details = async (id: string) =>
      assertAtomOk(await read(await t.fetch(`/files/${id}`, { headers: { Authorization: alice.key } })), 200, 'File Full info').entry;
    assert.equal((await details(a.id))['ed:status'], 'B');
    assert.equal((await details(b.id))['ed:status'], 'B');
    assert.equal((await details(other.id))['ed:status'], 'A', 'other content is untouched');

    assert.equal((await download(a.downloadLink)).status, 410);
    assert.equal((await download(`${b.downloadLink}?download=1`)).status, 410);
    assertAtomError(await read(await t.fetch(`/files/${a.id};DirectLink`, { headers: { Authorization: alice.key } })), 410, 'errorFileInNoDownloadedStatus');
    assert.equal((await download(other.downloadLink)).status, 200);

    const again = await t.upload(bob.key, 'renamed.bin', content);
    assertAtomError({ status: again.response.status, headers: again.response.headers, body: again.body }, 403, 'errorFileInBlackList');
  });

  test("a blacklist add that commits between the upload's checks and its insert still refuses the upload, and no active row is left", async () => {
    const { key, account } = await t.account();
    const content = 'blacklisted while the upload was being stored';
    const digest = sha256(content);
    // The operator's command lands right after the upload's checks outside its transaction
    // (the name patterns, read last): the exact interleaving of the race, made deterministic.
    const blacklist = t.server.services.store.blacklist;
    const original = blacklist.names;
    let raced = 0;
    blacklist.names = async () => {
      const patterns = await original.call(blacklist);
      if (raced++ === 0) await t.server.services.files.blacklistAdd(digest, 'race', true);
      return patterns;
    };
    try {
      const up = await t.upload(key, 'racing.bin', content);
      assertAtomError({ status: up.response.status, headers: up.response.headers, body: up.body }, 403, 'errorFileInBlackList');
    } finally {
      blacklist.names = original;
    }
    assert.equal(raced, 1);
    assert.deepEqual(await t.server.services.store.files.list({ ownerId: account.id, states: [FileStatus.Active], limit: 10 }), []);
    assert.equal(await fileRowsWithDigest(digest), 0, 'no file row');
  });
});

describe('account controls', () => {
  test('a disabled account: its key gets 401 Wrong apikey at once and POST /apikeys fails; enable restores both', async () => {
    const { key, login, password } = await t.account();
    assertAtomOk(await getAccount(key), 200, 'Account Info');

    assertOk(await cli('accounts', 'disable', '--login', login));
    assertAtomError(await getAccount(key), 401, 'errorPermissionDenied', 'Wrong apikey');
    const upload = await t.upload(key, 'x.txt', 'x');
    assert.equal(upload.response.status, 401, upload.body);
    assertAtomError(await getKey(login, password), 401, 'errorWrongCredentials', 'Invalid login or password');

    await t.server.services.accounts.setDisabled(login, false);
    assertAtomOk(await getAccount(key), 200, 'Account Info');
    const again = await getKey(login, password);
    assertAtomOk(again, 201, 'ApiKey');
    assert.equal(keyOf(again.body), key, 'the same key as before');
  });

  test('regenerate-key: the old key gets 401, the printed one works and POST /apikeys returns it', async () => {
    const { key, login, password } = await t.account();
    const fresh = assertOk(await cli('accounts', 'regenerate-key', '--login', login)).trim();
    assert.match(fresh, /^[A-Za-z0-9]{32}$/);
    assertAtomError(await getAccount(key), 401, 'errorPermissionDenied', 'Wrong apikey');
    assertAtomOk(await getAccount(fresh), 200, 'Account Info');
    assert.equal(keyOf((await getKey(login, password)).body), fresh);
  });

  test('set-password: the old password is refused, the new one gets the (unchanged) key', async () => {
    const { key, login, password } = await t.account();
    await t.server.services.accounts.setPassword(login, 'a brand new password');
    assertAtomError(await getKey(login, password), 401, 'errorWrongCredentials');
    const response = await getKey(login, 'a brand new password');
    assertAtomOk(response, 201, 'ApiKey');
    assert.equal(keyOf(response.body), key);
  });

  test('balance set and added by the operator shows in GET /account ed:balance', async () => {
    const { key, login } = await t.account();
    await t.server.services.accounts.setBalance(login, 1250);
    assert.equal(assertAtomOk(await getAccount(key), 200, 'Account Info').entry['ed:balance'], '12.50');
    await t.server.services.accounts.addBalance(login, -300);
    assert.match((await getAccount(key)).body, /<ed:balance>9\.50<\/ed:balance>/);
  });
});
