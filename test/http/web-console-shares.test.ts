// The console's Shares section (issue 25) over HTTP: every account's shares and upload
// requests with their owner, target, counts, expiry and state, searched by owner; an
// operator revokes a share or closes a request (the link stops at once) and it lands in
// the audit log as `web:<login>`; nobody else reaches any of it; the sharing settings on
// the settings page. Runs on both setups (SQLite + data folder, PostgreSQL + S3).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser, csrfOf, type Page } from '../helpers/browser.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const HOSTILE = `<i "x" & 'y'>`;
const DAY = 86_400_000;

function page(p: Page, status = 200): string {
  assert.equal(p.status, status, p.body);
  assert.equal(p.response.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.equal(p.response.headers.get('cache-control'), 'no-store');
  return p.body;
}

/** The table row of a share or request on the console page. */
function rowOf(body: string, kind: 'share' | 'request', id: string): string {
  const start = body.indexOf(`<tr data-${kind}="${id}">`);
  assert.ok(start >= 0, `${kind} ${id} is not listed`);
  return body.slice(start, body.indexOf('</tr>', start));
}
/** A row's cells as text, tags dropped. */
const cells = (row: string) => [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());
const listed = (body: string, kind: 'share' | 'request') => [...body.matchAll(new RegExp(`<tr data-${kind}="([A-Za-z0-9]{22})">`, 'g'))].map((m) => m[1]!);

async function api(t: TestServer, method: string, path: string, key: string, fields: Record<string, string> = {}): Promise<string> {
  const response = await t.fetch(path, { method, headers: { Authorization: key }, body: method === 'GET' ? undefined : new URLSearchParams(fields) });
  const body = await response.text();
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${body}`);
  return body;
}
const entryId = (body: string) => /<entry>\s*<id>([A-Za-z0-9]{10,22})<\/id>/.exec(body)?.[1] ?? assert.fail(body);

describe('console: shares and upload requests', () => {
  let t: TestServer;
  let clock: TestClock;
  let operator: Browser;
  let csrf: string;
  const adminLogin = `admin-${process.pid}`;

  before(async () => {
    clock = new TestClock(Date.parse('2026-11-21T10:00:00Z'));
    t = await startTestServer({ loginAttemptsPerMinute: 1000, sharePasswordRequired: false, shareMaxExpiryMs: 30 * DAY, fileExpiryMaxMs: 90 * DAY }, clock);
    await t.server.services.accounts.create({ login: adminLogin, password: 'operator password', isOperator: true });
    operator = new Browser(t.url);
    assert.equal((await operator.signIn(adminLogin, 'operator password')).status, 303);
    csrf = csrfOf(page(await operator.get('/console/shares'))) ?? '';
    assert.ok(csrf);
  });
  after(() => t.close());

  const audit = async (action: string) => (await t.server.services.audit.list({ limit: 100, action })).filter((e) => e.actor === `web:${adminLogin}`);

  test('lists every account’s shares and requests with counts and state, searched by owner; revoke and close stop the links and are audited', async () => {
    const alice = await t.account();
    const bob = await t.account();
    const { id: file } = await t.upload(alice.key, `<i & 'y'>.txt`, 'alice bytes');
    const folder = entryId(await api(t, 'POST', '/folders', bob.key, { name: 'Bob inbox' }));
    const aliceShare = entryId(await api(t, 'POST', '/shares', alice.key, { file, max_downloads: '4', password: 'pw', expires_in: '3600' }));
    const bobShare = entryId(await api(t, 'POST', '/shares', bob.key, { folder, expires_in: String(7 * 86_400) }));
    const bobRequest = entryId(
      await api(t, 'POST', '/requests', bob.key, { folder, title: HOSTILE, max_files: '2', max_bytes: '1048576', expires_in: '86400' }),
    );
    assert.equal((await fetch(`${t.url}/s/${aliceShare}/download`, { headers: { 'Filehaven-Share-Password': 'pw' } })).status, 200);
    const upload = new FormData();
    upload.append('upload', new Blob(['12345']), 'five.txt');
    assert.equal((await fetch(`${t.url}/r/${bobRequest}`, { method: 'POST', body: upload })).status, 201);

    let body = page(await operator.get('/console/shares'));
    assert.match(body, /<a href="\/console\/shares" aria-current="page">Shares<\/a>/);
    assert.deepEqual(cells(rowOf(body, 'share', aliceShare)).slice(1), [alice.login, '1 / 4', '2026-11-21 11:00 UTC', 'live password', 'Revoke']);
    assert.match(rowOf(body, 'share', aliceShare), /<bdi>&lt;i &amp; &#39;y&#39;&gt;\.txt<\/bdi>/);
    assert.deepEqual(cells(rowOf(body, 'share', bobShare)).slice(1), [bob.login, '0', '2026-11-28 10:00 UTC', 'live', 'Revoke']);
    assert.deepEqual(cells(rowOf(body, 'request', bobRequest)).slice(1), [bob.login, '1 / 2', '5 B / 1.0 MiB', '2026-11-22 10:00 UTC', 'live', 'Close']);
    assert.match(rowOf(body, 'request', bobRequest), /<bdi>&lt;i &quot;x&quot; &amp; &#39;y&#39;&gt;<\/bdi><div class="meta-line">into <bdi>Bob inbox<\/bdi>/);

    // By owner.
    body = page(await operator.get(`/console/shares?owner=${encodeURIComponent(bob.login)}`));
    assert.deepEqual(listed(body, 'share'), [bobShare]);
    assert.deepEqual(listed(body, 'request'), [bobRequest]);
    assert.match(page(await operator.get('/console/shares?owner=nobody-like-this'), 400), /No account with login &quot;nobody-like-this&quot;\./);

    // Expired ones say so, and can still be revoked.
    clock.advance(2 * 3_600_000);
    assert.equal(cells(rowOf(page(await operator.get('/console/shares')), 'share', aliceShare))[4], 'expired password');
    clock.advance(-2 * 3_600_000);

    // Revoke: back to the list with a note; the link is gone; the owner's list drops it; audited.
    const back = `/console/shares?owner=${encodeURIComponent(alice.login)}`;
    const revoked = await operator.post(`/console/shares/${aliceShare}/revoke`, { csrf, back });
    assert.equal(revoked.status, 303, revoked.body);
    assert.equal(revoked.response.headers.get('location'), `${back}&done=revoke`);
    body = page(await operator.get(`${back}&done=revoke`));
    assert.match(body, /<p class="notice ok" role="status">Share revoked: its link no longer works\.<\/p>/);
    assert.deepEqual(cells(rowOf(body, 'share', aliceShare)).slice(4), ['revoked password', '']);
    assert.equal((await fetch(`${t.url}/s/${aliceShare}/download`, { headers: { 'Filehaven-Share-Password': 'pw' } })).status, 404);
    assert.doesNotMatch(await api(t, 'GET', '/shares', alice.key), new RegExp(aliceShare));
    const [entry, ...more] = await audit('shares.revoke');
    assert.deepEqual([entry?.object, more], [`share:${aliceShare}`, []]);
    assert.match(entry?.details ?? '', /^by an operator; owner #\d+ downloads=1$/);
    // Live only hides it; revoking again changes nothing and says why.
    assert.deepEqual(listed(page(await operator.get(`${back}&live=1`)), 'share'), []);
    assert.match(page(await operator.post(`/console/shares/${aliceShare}/revoke`, { csrf, back }), 400), /Share does not exist or was revoked\./);
    assert.equal((await audit('shares.revoke')).length, 1);

    // Close a request: its link takes nothing; the file it brought stays Bob's.
    const closed = await operator.post(`/console/requests/${bobRequest}/close`, { csrf, back: '/console/shares' });
    assert.equal(closed.response.headers.get('location'), '/console/shares?done=close');
    assert.equal(cells(rowOf(page(await operator.get('/console/shares')), 'request', bobRequest))[5], 'closed');
    assert.equal((await fetch(`${t.url}/r/${bobRequest}`)).status, 404);
    assert.match(await api(t, 'GET', '/files', bob.key), /<title>five\.txt<\/title>/);
    assert.deepEqual(
      (await audit('requests.close')).map((e) => e.object),
      [`request:${bobRequest}`],
    );
    assert.match(page(await operator.post(`/console/requests/${bobRequest}/close`, { csrf }), 400), /Upload request does not exist or was closed\./);
    assert.match(page(await operator.post('/console/shares/not-a-link-id/revoke', { csrf }), 400), /Share does not exist or was revoked\./);
    // A foreign back address is not followed.
    assert.equal(
      (await operator.post(`/console/shares/${bobShare}/revoke`, { csrf, back: 'https://evil.example/' })).response.headers.get('location'),
      '/console/files?done=revoke',
    );
  });

  test('only operators reach it, and only with the form token', async () => {
    const owner = await t.account();
    const { id: file } = await t.upload(owner.key, 'x.txt', 'x');
    const share = entryId(await api(t, 'POST', '/shares', owner.key, { file }));
    const user = new Browser(t.url);
    assert.equal((await user.signIn(owner.login, owner.password)).status, 303);
    for (const b of [user, new Browser(t.url)]) {
      const list = await b.get('/console/shares');
      assert.equal(list.status, 404);
      assert.doesNotMatch(list.body, new RegExp(share));
      assert.equal((await b.post(`/console/shares/${share}/revoke`, { csrf })).status, 404);
    }
    assert.equal((await operator.post(`/console/shares/${share}/revoke`, {})).status, 403);
    assert.equal((await fetch(`${t.url}/s/${share}/download`)).status, 200);
  });

  test('the settings page shows the sharing settings', async () => {
    const body = page(await operator.get('/console/settings'));
    for (const [label, value, flag] of [
      ['Password on every share and upload request', 'optional', '--share-password-required'],
      ['Longest share or upload request', '30 d', '--share-max-expiry'],
      ['File expiry by default', 'never', '--file-expiry-default'],
      ['Longest file expiry', '90 d', '--file-expiry-max'],
      ['Upload requests', 'on', '--upload-requests'],
    ]) {
      assert.match(body, new RegExp(`<tr><td>${label}</td><td>${value}</td><td><code>${flag}</code></td></tr>`));
    }
  });
});
