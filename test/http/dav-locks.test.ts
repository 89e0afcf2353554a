// WebDAV locks over HTTP (issue 27, RFC 4918 class 2): LOCK, refresh, UNLOCK, the If
// header, locks honoured by writes, a lock on an unmapped URL, and locks shared by two
// servers of one site. Sign-in: Basic with the login and the account's API key.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { parseDavPath } from '../../src/webdav/dav-path.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

let t: TestServer;
let ada: TestAccount;
let bob: TestAccount;

before(async () => {
  t = await startTestServer();
  ada = await t.account();
  bob = await t.account();
});
after(() => t?.close());

const basic = (who: TestAccount) => `Basic ${Buffer.from(`${who.login}:${who.key}`).toString('base64')}`;
const etagOf = (content: string) => `"${createHash('sha256').update(content).digest('hex')}"`;

interface Answer {
  status: number;
  body: string;
  headers: Headers;
}

async function dav(
  method: string,
  path: string,
  options: { who?: TestAccount; headers?: Record<string, string>; body?: string; on?: TestServer } = {},
): Promise<Answer> {
  const response = await (options.on ?? t).fetch(`/dav${path}`, {
    method,
    headers: { Authorization: basic(options.who ?? ada), ...options.headers },
    body: options.body,
  });
  return { status: response.status, body: await response.text(), headers: response.headers };
}

const lockinfo = (scope: 'exclusive' | 'shared', owner = '<D:href>mailto:ada@example.com</D:href>') =>
  `<?xml version="1.0" encoding="utf-8"?>\n<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:${scope}/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>${owner}</D:owner></D:lockinfo>`;

/** A new lock: 200 or 201 with its token. */
async function lock(
  path: string,
  options: { scope?: 'exclusive' | 'shared'; depth?: string; who?: TestAccount; headers?: Record<string, string>; on?: TestServer } = {},
): Promise<Answer & { token: string }> {
  const answer = await dav('LOCK', path, {
    who: options.who,
    on: options.on,
    headers: { 'Content-Type': 'application/xml', Depth: options.depth ?? '0', Timeout: 'Second-600', ...options.headers },
    body: lockinfo(options.scope ?? 'exclusive'),
  });
  return { ...answer, token: /^<(urn:uuid:[0-9a-f-]{36})>$/.exec(answer.headers.get('lock-token') ?? '')?.[1] ?? '' };
}

async function upload(who: TestAccount, name: string, content: string): Promise<void> {
  const made = await t.upload(who.key, name, content);
  assert.equal(made.response.status, 201, made.body);
}

describe('LOCK, refresh and UNLOCK', () => {
  test('an exclusive lock: its token and activelock; a second lock refused 423; refresh; UNLOCK once', async () => {
    await upload(ada, 'doc.txt', 'hello');
    const first = await lock('/doc.txt');
    assert.equal(first.status, 200, first.body);
    assert.ok(first.token, 'a Lock-Token header <urn:uuid:...>');
    assert.match(first.headers.get('content-type') ?? '', /^application\/xml/);
    assert.match(
      first.body,
      new RegExp(
        '<D:prop xmlns:D="DAV:"><D:lockdiscovery><D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:exclusive/></D:lockscope>' +
          '<D:depth>0</D:depth><owner xmlns="DAV:"><href xmlns="DAV:">mailto:ada@example.com</href></owner><D:timeout>Second-600</D:timeout>' +
          `<D:locktoken><D:href>${first.token}</D:href></D:locktoken><D:lockroot><D:href>/dav/doc.txt</D:href></D:lockroot></D:activelock></D:lockdiscovery></D:prop>`,
      ),
    );

    for (const scope of ['exclusive', 'shared'] as const) {
      const second = await lock('/doc.txt', { scope });
      assert.equal(second.status, 423, `${scope}: ${second.body}`);
      assert.match(second.body, /<D:no-conflicting-lock><D:href>[^<]*doc\.txt<\/D:href><\/D:no-conflicting-lock>/);
      assert.equal(second.headers.get('lock-token'), null);
    }

    const refreshed = await dav('LOCK', '/doc.txt', { headers: { If: `(<${first.token}>)`, Timeout: 'Second-100' } });
    assert.equal(refreshed.status, 200, refreshed.body);
    assert.match(refreshed.body, /<D:timeout>Second-100<\/D:timeout>/);
    assert.match(refreshed.body, new RegExp(`<D:locktoken><D:href>${first.token}</D:href>`));
    assert.equal(refreshed.headers.get('lock-token'), null, 'a refresh makes no new token');
    const capped = await dav('LOCK', '/doc.txt', { headers: { If: `(<${first.token}>)`, Timeout: 'Infinite, Second-4100000000' } });
    assert.match(capped.body, /<D:timeout>Second-3600<\/D:timeout>/, 'at most an hour');
    assert.equal((await dav('LOCK', '/doc.txt', { headers: { If: '(<urn:uuid:00000000-0000-4000-8000-000000000000>)' } })).status, 412);
    assert.equal((await dav('LOCK', '/doc.txt')).status, 400, 'a refresh names its lock');

    assert.equal((await dav('UNLOCK', '/doc.txt')).status, 400, 'no Lock-Token header');
    assert.equal((await dav('UNLOCK', '/doc.txt', { headers: { 'Lock-Token': 'urn:uuid:x' } })).status, 400, 'no angle brackets');
    const bogus = await dav('UNLOCK', '/doc.txt', { headers: { 'Lock-Token': '<opaquelocktoken:foobar>' } });
    assert.equal(bogus.status, 409);
    assert.match(bogus.body, /<D:lock-token-matches-request-uri\/>/);
    assert.equal((await dav('UNLOCK', '/other.txt', { headers: { 'Lock-Token': `<${first.token}>` } })).status, 409, 'not through another path');
    assert.equal((await dav('UNLOCK', '/doc.txt', { headers: { 'Lock-Token': `<${first.token}>` } })).status, 204);
    assert.equal((await dav('UNLOCK', '/doc.txt', { headers: { 'Lock-Token': `<${first.token}>` } })).status, 409, 'once');
    const again = await lock('/doc.txt');
    assert.equal(again.status, 200, 'free again');
    assert.equal((await dav('UNLOCK', '/doc.txt', { headers: { 'Lock-Token': `<${again.token}>` } })).status, 204);
  });

  test('shared locks coexist; an exclusive one does not join them', async () => {
    await upload(ada, 'shared.txt', 'shared');
    const one = await lock('/shared.txt', { scope: 'shared' });
    const two = await lock('/shared.txt', { scope: 'shared' });
    assert.deepEqual([one.status, two.status], [200, 200]);
    assert.notEqual(one.token, two.token);
    assert.equal((two.body.match(/<D:activelock>/g) ?? []).length, 2, 'the lockdiscovery shows both');
    assert.ok(two.body.indexOf(two.token) < two.body.indexOf(one.token), 'the new lock first');
    assert.equal((await lock('/shared.txt')).status, 423);
  });

  test('a deep lock on a folder covers what is under it; refreshed through a member; Depth 1 refused', async () => {
    const folder = await t.server.services.folders.create(ada.account, 'Reports');
    await t.server.services.folders.create(ada.account, 'Inner', folder.id);
    assert.equal((await lock('/Reports/', { depth: '1' })).status, 400);
    const deep = await lock('/Reports/', { depth: 'infinity' });
    assert.equal(deep.status, 200, deep.body);
    assert.match(deep.body, /<D:depth>infinity<\/D:depth>/);
    assert.match(deep.body, /<D:lockroot><D:href>\/dav\/Reports\/<\/D:href><\/D:lockroot>/);
    assert.equal((await lock('/Reports/Inner/')).status, 423, 'a lock below a deep exclusive one');
    assert.equal((await lock('/Reports/Inner/new.txt')).status, 423, 'nor on an unmapped URL below it');

    const indirect = await dav('LOCK', '/Reports/Inner/', { headers: { If: `(<${deep.token}>)`, Timeout: 'Second-60' } });
    assert.equal(indirect.status, 200, indirect.body);
    assert.match(
      indirect.body,
      /<D:timeout>Second-60<\/D:timeout><D:locktoken><D:href>urn:uuid:[^<]+<\/D:href><\/D:locktoken><D:lockroot><D:href>\/dav\/Reports\/<\/D:href>/,
    );
    assert.equal((await dav('UNLOCK', '/Reports/Inner/', { headers: { 'Lock-Token': `<${deep.token}>` } })).status, 204, 'UNLOCK through a member');
  });

  test('bad LOCK bodies: 400, no lock', async () => {
    await upload(ada, 'bad.txt', 'bad');
    const bodies = [
      'not xml at all',
      '<D:propfind xmlns:D="DAV:"/>',
      '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:other/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>',
      '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:read/></D:locktype></D:lockinfo>',
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><D:lockinfo xmlns:D="DAV:"><D:owner>&e;</D:owner></D:lockinfo>',
      `<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>${'x'.repeat(9000)}</D:owner></D:lockinfo>`,
    ];
    for (const body of bodies) {
      const answer = await dav('LOCK', '/bad.txt', { headers: { 'Content-Type': 'application/xml' }, body });
      assert.equal(answer.status, 400, `${body.slice(0, 60)}: ${answer.body}`);
    }
    assert.equal((await lock('/bad.txt')).status, 200, 'no lock was left by them');
  });
});

describe('a lock on an unmapped URL', () => {
  test('makes an empty file (201) that the API lists; in a missing folder 409; refused, it makes nothing', async () => {
    const made = await lock('/fresh.txt');
    assert.equal(made.status, 201, made.body);
    assert.ok(made.token);
    const files = await t.server.services.store.files.activeIn(
      { ownerId: ada.account.id, folderId: null, liveAt: Date.now() },
      { name: 'fresh.txt', limit: 10 },
    );
    assert.equal(files.length, 1);
    assert.equal(files[0]!.size, 0);
    assert.equal((await lock('/fresh.txt')).status, 423, 'the file is locked');
    assert.equal((await dav('UNLOCK', '/fresh.txt', { headers: { 'Lock-Token': `<${made.token}>` } })).status, 204);
    assert.equal((await lock('/fresh.txt')).status, 200, 'it exists now: 200');

    assert.equal((await lock('/no-such-folder/new.txt')).status, 409);

    const folder = await t.server.services.folders.create(ada.account, 'Guarded');
    const guard = await lock('/Guarded/', { depth: 'infinity', scope: 'shared' });
    assert.equal(guard.status, 200);
    const refused = await lock('/Guarded/new.txt', { scope: 'shared' });
    assert.equal(refused.status, 423, 'a new member of a locked folder needs its token');
    assert.match(refused.body, /<D:lock-token-submitted>/);
    const scope = { ownerId: ada.account.id, folderId: folder.id, liveAt: Date.now() };
    assert.equal((await t.server.services.store.files.activeIn(scope, { limit: 10 })).length, 0, 'no file was made');
    const allowed = await lock('/Guarded/new.txt', { scope: 'shared', headers: { If: `(<${guard.token}>)` } });
    assert.equal(allowed.status, 201, allowed.body);
    assert.equal((await t.server.services.store.files.activeIn(scope, { limit: 10 })).length, 1);
  });
});

describe('a lock on an unmapped URL the upload refuses', () => {
  test('a blacklisted name: 403, no file and no lock left', async () => {
    await t.server.services.moderation.addNamePattern('*.forbidden');
    const refused = await lock('/evil.forbidden');
    assert.equal(refused.status, 403, refused.body);
    assert.equal(refused.headers.get('lock-token'), null);
    const files = await t.server.services.store.files.activeIn(
      { ownerId: ada.account.id, folderId: null, liveAt: Date.now() },
      { name: 'evil.forbidden', limit: 10 },
    );
    assert.equal(files.length, 0);
    assert.deepEqual(await t.server.services.dav.locks.discover(ada.account, parseDavPath('/evil.forbidden')), [], 'the lock granted first is gone');
  });
});

describe('tokens of another account', () => {
  test("Bob's lock and token mean nothing in Ada's tree, and the reverse", async () => {
    await upload(ada, 'mine.txt', 'ada');
    await upload(bob, 'mine.txt', 'bob');
    const adas = await lock('/mine.txt');
    const bobs = await lock('/mine.txt', { who: bob });
    assert.deepEqual([adas.status, bobs.status], [200, 200], 'each tree has its own locks');
    // Bob presents Ada's token: it unlocks nothing, refreshes nothing, submits nothing.
    assert.equal((await dav('UNLOCK', '/mine.txt', { who: bob, headers: { 'Lock-Token': `<${adas.token}>` } })).status, 409);
    assert.equal((await dav('LOCK', '/mine.txt', { who: bob, headers: { If: `(<${adas.token}>)` } })).status, 412);
    assert.equal((await lock('/mine.txt', { who: bob, headers: { If: `(<${adas.token}>)` } })).status, 412);
    // Ada's lock still stands.
    assert.equal((await lock('/mine.txt')).status, 423);
    assert.equal((await dav('UNLOCK', '/mine.txt', { headers: { 'Lock-Token': `<${adas.token}>` } })).status, 204);
  });
});

describe('the If header', () => {
  test('lists, Not, entity tags and resource tags: 412 when no list holds, 400 when malformed', async () => {
    await upload(ada, 'cond.txt', 'conditional');
    const etag = etagOf('conditional');
    const held = await lock('/cond.txt', { scope: 'shared' });
    const host = new URL(t.url).host;
    const withIf = async (value: string) => (await lock('/cond.txt', { scope: 'shared', headers: { If: value } })).status;
    // Each holds: a new shared lock is granted (200).
    for (const value of [
      `(<${held.token}> [${etag}])`,
      `(<${held.token}>) (Not <DAV:no-lock>)`,
      `(<${held.token}> [${etag}]) (Not <DAV:no-lock> [${etag}])`,
      `(<DAV:no-lock>) ([${etag}])`,
      `(Not [W/${etag}])`,
      `<http://${host}/dav/cond.txt> (<${held.token}>)`,
      `</dav/cond.txt> ([${etag}])`,
      `<http://${host}/dav/cond.txt> (<DAV:no-lock>) <http://${host}/dav/cond.txt> (Not <DAV:no-lock>)`,
    ]) {
      assert.equal(await withIf(value), 200, value);
    }
    // Each fails: 412.
    for (const value of [
      `(<DAV:no-lock> [${etag}])`,
      '(<DAV:no-lock>)',
      `(["0${etag.slice(2)}])`,
      `([W/${etag}])`,
      `(Not <${held.token}>)`,
      `(<${held.token}> ["bad"]) (Not <DAV:no-lock> ["bad"])`,
      `<http://${host}/dav/other.txt> (<${held.token}>)`,
      `<http://elsewhere.example/dav/cond.txt> (<${held.token}>)`,
      `<http://${host}/dav/cond.txt/x> ([${etag}])`,
    ]) {
      assert.equal(await withIf(value), 412, value);
    }
    // Malformed: 400.
    for (const value of [
      '',
      'nonsense',
      '()',
      `(<${held.token}>) <http://${host}/dav/cond.txt> (<x:y>)`,
      '<http://a/b>',
      '([unquoted])',
      '(Nothing)',
      `(<${held.token}>) x`,
    ]) {
      assert.equal(await withIf(value), 400, JSON.stringify(value));
    }
    // Cut off by its end (litmus writes complex conditions into a 200-byte buffer): the
    // last list never holds, the complete ones before it count.
    const cut = (value: string) => value.slice(0, 199);
    const complex = (tag: string) => `(<${held.token}> [${tag}]) (Not <DAV:no-lock> [${tag}])`;
    assert.ok(complex(etag).length > 199);
    assert.equal(await withIf(cut(complex(etag))), 200, 'litmus complex_cond_put');
    assert.equal(await withIf(cut(complex(`"0${etag.slice(2)}`))), 412, 'litmus fail_complex_cond_put');
    for (const value of ['(', `(<${held.token}>`, `([${etag}`, '(Not', '(Not <DAV:no-lock> ["x']) {
      assert.equal(await withIf(value), 412, JSON.stringify(value));
    }
  });

  test('a refresh with a corrupted token is 412; one whose list holds by Not alone submits no token (400)', async () => {
    await upload(ada, 'corrupt.txt', 'x');
    const held = await lock('/corrupt.txt');
    assert.equal((await dav('LOCK', '/corrupt.txt', { headers: { If: `(<${held.token}x>)` } })).status, 412);
    assert.equal((await dav('LOCK', '/corrupt.txt', { headers: { If: '(Not <DAV:no-lock>)' } })).status, 400);
  });
});

describe('writes honour locks (needs the PUT handler)', () => {
  test('a PUT is refused 423 without the token, and accepted with it; a conditional PUT fails 412', async () => {
    await upload(ada, 'guarded.txt', 'before');
    const held = await lock('/guarded.txt');
    const put = (headers: Record<string, string>) => dav('PUT', '/guarded.txt', { headers, body: 'after' });
    const refused = await put({});
    assert.equal(refused.status, 423, refused.body);
    assert.match(refused.body, /<D:lock-token-submitted><D:href>[^<]*guarded\.txt<\/D:href><\/D:lock-token-submitted>/);
    // litmus cond_put_corrupt_token: the If header holds (by its Not list), the lock is not submitted.
    assert.equal((await put({ If: `(<${held.token}x>) (Not <DAV:no-lock>)` })).status, 423);
    assert.equal((await put({ If: `(<DAV:no-lock> [${etagOf('before')}])` })).status, 412);
    const accepted = await put({ If: `(<${held.token}> [${etagOf('before')}])` });
    assert.ok(accepted.status === 204 || accepted.status === 200, `${accepted.status} ${accepted.body}`);
  });
});

describe('two servers of one site', () => {
  test('a lock taken on one server holds on the other, and is removed there', async () => {
    const other = await t.sibling();
    try {
      await upload(ada, 'both.txt', 'both');
      const held = await lock('/both.txt');
      assert.equal(held.status, 200);
      assert.equal((await lock('/both.txt', { on: other })).status, 423);
      const refreshed = await dav('LOCK', '/both.txt', { on: other, headers: { If: `(<${held.token}>)` } });
      assert.equal(refreshed.status, 200, refreshed.body);
      assert.equal((await dav('UNLOCK', '/both.txt', { on: other, headers: { 'Lock-Token': `<${held.token}>` } })).status, 204);
      assert.equal((await lock('/both.txt')).status, 200, 'free on the first server');
    } finally {
      await other.close();
    }
  });
});

describe('a depth-0 lock on a collection protects its members’ names (RFC 4918 7.4)', () => {
  test('MKCOL, DELETE and MOVE of a member need the token: 423 without it, done with it', async () => {
    assert.equal((await dav('MKCOL', '/l3/')).status, 201);
    await upload(ada, 'member.txt', 'member');
    const moved = await dav('MOVE', '/member.txt', { headers: { Destination: `${t.url}/dav/l3/member.txt` } });
    assert.equal(moved.status, 201, moved.body);
    const held = await lock('/l3/', { depth: '0' });
    assert.equal(held.status, 200, held.body);
    // Tagged with the collection: an untagged list would be of the member, which the lock does not cover (412).
    const withToken = { If: `<${t.url}/dav/l3/> (<${held.token}>)` };

    const mkcol = await dav('MKCOL', '/l3/sub/');
    assert.equal(mkcol.status, 423, mkcol.body);
    assert.match(mkcol.body, /<D:lock-token-submitted><D:href>\/dav\/l3\/?<\/D:href><\/D:lock-token-submitted>/);
    assert.equal((await dav('DELETE', '/l3/member.txt')).status, 423);
    assert.equal((await dav('MOVE', '/l3/member.txt', { headers: { Destination: `${t.url}/dav/away.txt` } })).status, 423, 'a MOVE out');
    await upload(ada, 'outside.txt', 'outside');
    assert.equal((await dav('MOVE', '/outside.txt', { headers: { Destination: `${t.url}/dav/l3/in.txt` } })).status, 423, 'a MOVE in');
    assert.equal((await dav('COPY', '/outside.txt', { headers: { Destination: `${t.url}/dav/l3/copy.txt` } })).status, 423, 'a COPY in');

    assert.equal((await dav('MKCOL', '/l3/sub/', { headers: withToken })).status, 201);
    assert.equal((await dav('MOVE', '/l3/member.txt', { headers: { Destination: `${t.url}/dav/l3/renamed.txt`, ...withToken } })).status, 201);
    assert.equal((await dav('DELETE', '/l3/renamed.txt', { headers: withToken })).status, 204);
    assert.equal((await dav('GET', '/l3/renamed.txt')).status, 404);
  });

  test('the 423 names the lock root as a URL path of the tree: percent-encoded', async () => {
    assert.equal((await dav('MKCOL', '/Q%26A%20100%25/')).status, 201);
    const held = await lock('/Q%26A%20100%25/', { depth: 'infinity' });
    assert.equal(held.status, 200, held.body);
    const refused = await dav('PUT', '/Q%26A%20100%25/x.txt', { body: 'x' });
    assert.equal(refused.status, 423, refused.body);
    assert.match(refused.body, /<D:lock-token-submitted><D:href>\/dav\/Q%26A%20100%25\/?<\/D:href><\/D:lock-token-submitted>/);
  });
});
