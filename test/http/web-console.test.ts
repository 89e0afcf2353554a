import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { humanSize } from '../../src/http/web/format.js';
import { download } from '../helpers/api-checks.js';
import { Browser, csrfOf, type Page } from '../helpers/browser.js';
import { eventually } from '../helpers/downloads.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';

// The operator console (issue 12) over HTTP: who reaches it, CSRF, bad input, escaping,
// and that each action lands in the same audit log as the CLI's, named `web:<login>`.

const HOSTILE = `<script>alert("x")</script> 'single' "double" & more`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A console page: 200, the page headers, no inline code; returns the body. */
function page(p: Page, status = 200): string {
  assert.equal(p.status, status, p.body);
  assert.equal(p.response.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.equal(p.response.headers.get('cache-control'), 'no-store');
  assert.match(p.response.headers.get('content-security-policy') ?? '', /default-src 'none'; script-src 'self'/);
  assert.doesNotMatch(p.body, /<script(?![^>]*\ssrc=)/);
  for (const tag of p.body.match(/<[a-zA-Z][^>]*>/g) ?? []) assert.doesNotMatch(tag.replace(/"[^"]*"/g, '""'), /\s(style|on[a-z]+)=/i, tag);
  return p.body;
}

/** The site's plain 404 page, which says nothing about a console. */
function notFound(p: Page): void {
  assert.equal(p.status, 404, p.body);
  assert.match(p.body, /There is nothing at this address/);
  assert.doesNotMatch(p.body, /console-nav|Console/);
}

function redirect(p: Page, location: string | RegExp): void {
  assert.equal(p.status, 303, p.body);
  const got = p.response.headers.get('location') ?? '';
  if (typeof location === 'string') assert.equal(got, location);
  else assert.match(got, location);
}

describe('operator console over HTTP', () => {
  let t: TestServer;
  let operator: Browser;
  let csrf: string;
  const adminLogin = `admin-${process.pid}`;

  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000 });
    await t.server.services.accounts.create({ login: adminLogin, password: 'operator password', isOperator: true });
    operator = new Browser(t.url);
    redirect(await operator.signIn(adminLogin, 'operator password'), '/accounts/profile/misc');
    csrf = csrfOf((await operator.get('/console/accounts')).body) ?? '';
    assert.ok(csrf);
  });
  after(() => t.close());

  const audit = async (action: string) => (await t.server.services.audit.list({ limit: 100, action })).filter((e) => e.actor === `web:${adminLogin}`);
  const consolePaths = [
    '/console',
    '/console/accounts',
    '/console/files',
    '/console/blacklist',
    '/console/audit',
    '/console/settings',
    `/console/accounts/${adminLogin}`,
    `/console/digests/${'a'.repeat(64)}`,
  ];

  test('a signed-out visitor and a signed-in non-operator reach nothing: every page and form is the plain 404', async () => {
    const user = await t.account();
    const member = new Browser(t.url);
    redirect(await member.signIn(user.login, user.password), '/accounts/profile/misc');
    const memberCsrf = csrfOf((await member.get('/accounts/profile/misc')).body)!;
    for (const visitor of [new Browser(t.url), member]) {
      for (const path of consolePaths) notFound(await visitor.get(path));
      // A form with a valid token of the member's own session changes nothing either.
      notFound(await visitor.post('/console/accounts', { csrf: memberCsrf, login: 'sneaky', password: 'long enough password' }));
      notFound(await visitor.post(`/console/accounts/${user.login}/disable`, { csrf: memberCsrf }));
      notFound(await visitor.post('/console/blacklist/names', { csrf: memberCsrf, pattern: '*.exe' }));
    }
    assert.equal(await t.server.services.operator.search.accountByLogin('sneaky'), null);
    assert.equal((await t.server.services.accounts.byLoginOrFail(user.login)).disabled, false);
    assert.deepEqual(await t.server.services.moderation.namePatterns(), []);
    // The header offers the console to operators only.
    assert.doesNotMatch((await member.get('/my/files')).body, /href="\/console"/);
    assert.match((await operator.get('/my/files')).body, /<a href="\/console">Console<\/a>/);
  });

  test('every console page answers an operator, with the menu and the page headers', async () => {
    for (const path of consolePaths) assert.match(page(await operator.get(path)), /<nav class="console-nav" aria-label="Console">/, path);
    assert.match(page(await operator.get('/console/settings')), /Read only/);
  });

  test('a POST without the CSRF token, or with another, is refused with 403 and changes nothing', async () => {
    for (const token of [undefined, 'x'.repeat(43)]) {
      const fields: Record<string, string> = { login: 'no-csrf', password: 'long enough password' };
      if (token) fields.csrf = token;
      const p = await operator.post('/console/accounts', fields);
      assert.equal(p.status, 403, p.body);
      assert.match(p.body, /did not come from this site/);
    }
    assert.equal(await t.server.services.operator.search.accountByLogin('no-csrf'), null);
  });

  test('create, premium, disable, enable: done by the services, audited as web:<login>, names escaped', async () => {
    const login = `ada-${process.pid}`;
    redirect(
      await operator.post('/console/accounts', { csrf, login, password: 'correct horse', name: HOSTILE, email: '', premium_days: '30', traffic: '10GiB' }),
      `/console/accounts/${login}?done=created`,
    );
    const account = await t.server.services.accounts.byLoginOrFail(login);
    assert.equal(account.trafficLeft, 10 * 1024 ** 3);
    assert.ok(t.server.services.accounts.isPremium(account));
    for (const path of [`/console/accounts/${login}`, `/console/accounts?q=${encodeURIComponent('SCRIPT')}`]) {
      const body = page(await operator.get(path));
      assert.ok(!body.includes('<script>alert'), body);
      assert.ok(body.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'), body);
      assert.ok(body.includes(`<bdi>${login}</bdi>`), body);
    }

    redirect(await operator.post(`/console/accounts/${login}/premium`, { csrf, days: '5', traffic: '1GiB' }), `/console/accounts/${login}?done=premium`);
    assert.equal((await t.server.services.accounts.byLoginOrFail(login)).trafficLeft, 11 * 1024 ** 3);
    // Shortened by 10 of its 35 days, then ended now.
    const extended = (await t.server.services.accounts.byLoginOrFail(login)).premiumEnd!;
    redirect(await operator.post(`/console/accounts/${login}/premium`, { csrf, days: '-10' }), `/console/accounts/${login}?done=premium`);
    assert.equal((await t.server.services.accounts.byLoginOrFail(login)).premiumEnd, extended - 10 * 86_400_000);
    // Parts of a day, as with the CLI's --days: half a day is twelve hours.
    redirect(await operator.post(`/console/accounts/${login}/premium`, { csrf, days: '0.5' }), `/console/accounts/${login}?done=premium`);
    assert.equal((await t.server.services.accounts.byLoginOrFail(login)).premiumEnd, extended - 10 * 86_400_000 + 43_200_000);
    assert.match(page(await operator.get(`/console/accounts/${login}`)), /End premium now/);
    redirect(await operator.post(`/console/accounts/${login}/end-premium`, { csrf }), `/console/accounts/${login}?done=premium-ended`);
    const ended = await t.server.services.accounts.byLoginOrFail(login);
    assert.equal(t.server.services.accounts.isPremium(ended), false);
    assert.doesNotMatch(page(await operator.get(`/console/accounts/${login}`)), /End premium now/);
    redirect(await operator.post(`/console/accounts/${login}/end-premium`, { csrf }), `/console/accounts/${login}?done=premium-not-active`);
    redirect(await operator.post(`/console/accounts/${login}/disable`, { csrf }), `/console/accounts/${login}?done=disabled`);
    assert.equal((await t.server.services.accounts.byLoginOrFail(login)).disabled, true);
    redirect(await operator.post(`/console/accounts/${login}/disable`, { csrf }), `/console/accounts/${login}?done=already-disabled`);
    redirect(await operator.post(`/console/accounts/${login}/enable`, { csrf }), `/console/accounts/${login}?done=enabled`);

    assert.deepEqual(
      (await audit('accounts.')).filter((e) => e.object === `account:${login}`).map((e) => e.action),
      ['accounts.enable', 'accounts.disable', 'accounts.premium', 'accounts.premium', 'accounts.premium', 'accounts.premium', 'accounts.create'],
    );
    // The audit page shows them, filtered by object.
    const log = page(await operator.get(`/console/audit?object=${encodeURIComponent(`account:${login}`)}&actor=${encodeURIComponent(`web:${adminLogin}`)}`));
    assert.equal(log.match(/<td class="action"><code>accounts\.[a-z-]+<\/code><\/td>/g)?.length, 7, log);
  });

  test('bad input gets a 400 page with the reason, never a crash, and changes nothing', async () => {
    const { login } = await t.account();
    const before = await t.server.services.accounts.byLoginOrFail(login);
    const cases: [string, Record<string, string>, RegExp][] = [
      [`/console/accounts/${login}/premium`, { days: '99999999' }, /premium days must be a number such as 30 or 0\.5, from -36500 to 36500/],
      [`/console/accounts/${login}/premium`, { days: '2,5' }, /premium days must be a number such as 30 or 0\.5/i],
      [`/console/accounts/${login}/premium`, { days: '1e3' }, /premium days must be a number/i],
      [`/console/accounts/${login}/premium`, { days: '-3' }, /is not active: there is nothing to shorten/i],
      [`/console/accounts/${login}/premium`, { traffic: '10XB' }, /traffic must be a size like 10GiB/i],
      [`/console/accounts/${login}/premium`, {}, /give premium days and\/or traffic/i],
      ['/console/accounts/nobody-at-all/disable', {}, /no account with login &quot;nobody-at-all&quot;/i],
      ['/console/accounts', { login: 'bad login!', password: 'long enough password' }, /login must be 1-64 characters/i],
      ['/console/accounts', { login: 'shorty', password: 'short' }, /password must be at least 8 characters/i],
      ['/console/blacklist/digests', { sha256: 'not-a-digest' }, /sha-?256|digest/i],
      ['/console/blacklist/names', { pattern: '*' }, /./],
      ['/console/blacklist/names/remove', { pattern: '*.never-listed' }, /is not in the blacklist/],
      ['/console/files/NOSUCHFILE/block', {}, /no file with id/],
      [`/console/accounts/${adminLogin}/disable`, {}, /you cannot disable the account you are signed in with/],
      [`/console/accounts/${adminLogin}/reset-password`, {}, /you cannot reset the password of the account you are signed in with/],
    ];
    for (const [path, fields, message] of cases) {
      const body = page(await operator.post(path, { csrf, ...fields }), 400);
      assert.match(body, /Nothing was changed/, path);
      // The service's message, as a sentence.
      assert.match(body, new RegExp(message.source, 'i'), path);
    }
    assert.deepEqual(await t.server.services.accounts.byLoginOrFail(login), before);
    assert.equal(await t.server.services.operator.search.accountByLogin('shorty'), null);
    for (const path of [
      '/console/audit?from=yesterday',
      '/console/audit?from=2026-11-21&to=2026-11-01',
      '/console/files?sha256=xyz',
      '/console/files?owner=nobody-at-all',
    ]) {
      assert.equal((await operator.get(path)).status, 400, path);
    }
  });

  test('reset password shows a new one once and ends the sessions; sign-out everywhere ends them too', async () => {
    const user = await t.account();
    const member = new Browser(t.url);
    redirect(await member.signIn(user.login, user.password), '/accounts/profile/misc');
    assert.equal((await member.get('/accounts/profile/misc')).status, 200);

    redirect(await operator.post(`/console/accounts/${user.login}/sign-out`, { csrf }), `/console/accounts/${user.login}?done=signed-out`);
    assert.equal((await member.get('/accounts/profile/misc')).status, 303, 'the member was signed out');

    redirect(await member.signIn(user.login, user.password), '/accounts/profile/misc');
    const body = page(await operator.post(`/console/accounts/${user.login}/reset-password`, { csrf }));
    const password = /<code class="key" id="new-password">([^<]+)<\/code>/.exec(body)?.[1];
    assert.ok(password && password.length >= 16, body);
    assert.equal((await member.get('/accounts/profile/misc')).status, 303, 'the reset ended the session');
    assert.equal((await new Browser(t.url).signIn(user.login, user.password)).status, 401);
    redirect(await new Browser(t.url).signIn(user.login, password), '/accounts/profile/misc');
    const entries = (await audit('accounts.')).filter((e) => e.object === `account:${user.login}`);
    assert.deepEqual(
      entries.map((e) => e.action),
      ['accounts.reset-password', 'accounts.sign-out-everywhere'],
    );
    // Never the password itself.
    assert.ok(entries.every((e) => !e.details.includes(password)));
  });

  test('files: search by name, owner and digest; block, unblock, delete (after a confirm); where a digest is used', async () => {
    const owner = await t.account();
    const content = `console test ${process.pid}`;
    const first = await t.upload(owner.key, `report-${process.pid}.txt`, content);
    const second = await t.upload(owner.key, 'copy.txt', content);
    const digest = sha256(content);

    const byName = page(await operator.get(`/console/files?name=${encodeURIComponent(`REPORT-${process.pid}`)}`));
    assert.ok(byName.includes(`<code>${first.id}</code>`) && !byName.includes(`<code>${second.id}</code>`), byName);
    const byOwner = page(await operator.get(`/console/files?owner=${owner.login}`));
    assert.ok(byOwner.includes(first.id) && byOwner.includes(second.id), byOwner);
    const usage = page(await operator.get(`/console/digests/${digest.toUpperCase()}`));
    assert.ok(usage.includes(first.id) && usage.includes(second.id) && usage.includes('stored'), usage);

    const back = `/console/files?owner=${owner.login}`;
    redirect(await operator.post(`/console/files/${first.id}/block`, { csrf, back }), `${back}&done=block`);
    assert.equal((await t.server.services.moderation.fileInfo(first.id)).status, 'B');
    redirect(await operator.post(`/console/files/${first.id}/unblock`, { csrf, back: 'https://evil.example/' }), '/console/files?done=unblock');
    const confirm = page(await operator.post(`/console/files/${second.id}/delete`, { csrf, back }));
    assert.match(confirm, /Delete “<bdi>copy\.txt<\/bdi>”\?/);
    assert.equal((await t.server.services.moderation.fileInfo(second.id)).status, 'A', 'nothing deleted before the confirmation');
    redirect(await operator.post(`/console/files/${second.id}/delete`, { csrf, back, confirm: 'yes' }), `${back}&done=delete`);
    assert.equal((await t.server.services.moderation.fileInfo(second.id)).status, 'D');

    // Blacklisting from the digest page blocks the active copy and refuses new uploads.
    redirect(
      await operator.post('/console/blacklist/digests', { csrf, sha256: digest, reason: HOSTILE, block_existing: 'yes', back: `/console/digests/${digest}` }),
      `/console/digests/${digest}?done=blacklisted`,
    );
    assert.equal((await t.server.services.moderation.fileInfo(first.id)).status, 'B');
    assert.equal((await t.upload(owner.key, 'again.txt', content)).response.status, 403);
    const list = page(await operator.get('/console/blacklist'));
    assert.ok(list.includes(digest.slice(0, 16)) && !list.includes('<script>alert'), list);

    assert.deepEqual(
      (await audit('files.'))
        .filter((e) => e.object.startsWith('file:'))
        .map((e) => `${e.action} ${e.object}`)
        .slice(0, 3),
      [`files.delete file:${second.id}`, `files.unblock file:${first.id}`, `files.block file:${first.id}`],
    );
    assert.equal((await audit('blacklist.add')).find((e) => e.object === `sha256:${digest}`)?.details.includes('blocked 1 existing file(s)'), true);
  });

  test('the name blacklist: add, list escaped, remove; the audit log pages 50 at a time', async () => {
    redirect(await operator.post('/console/blacklist/names', { csrf, pattern: '*.EXE', reason: HOSTILE }), '/console/blacklist?done=name-added');
    const list = page(await operator.get('/console/blacklist'));
    assert.ok(list.includes('<code><bdi>*.exe</bdi></code>') && !list.includes('<script>alert'), list);
    redirect(await operator.post('/console/blacklist/names/remove', { csrf, pattern: '*.exe' }), '/console/blacklist?done=name-removed');
    assert.deepEqual(await t.server.services.moderation.namePatterns(), []);

    for (let i = 0; i < 55; i++) await t.server.services.audit.record({ actor: 'cli:pager', action: 'test.page', object: `thing:${i}` });
    const first = page(await operator.get('/console/audit?actor=cli:pager'));
    assert.equal(first.match(/<td class="action"><code>test\.page<\/code><\/td>/g)?.length, 50);
    const next = /href="(\/console\/audit\?[^"]+)" rel="next"/.exec(first)?.[1]?.replaceAll('&amp;', '&');
    assert.ok(next, first);
    const second = page(await operator.get(next));
    assert.equal(second.match(/<td class="action"><code>test\.page<\/code><\/td>/g)?.length, 5);
    assert.doesNotMatch(second, /rel="next"/);
  });

  test('the overview draws its charts as inline SVG from the files table', async () => {
    const owner = await t.account();
    await t.upload(owner.key, 'chart.bin', 'x'.repeat(5000));
    const body = page(await operator.get('/console?days=7'));
    assert.equal(body.match(/<svg viewBox="0 0 600 160" role="img"/g)?.length, 5, body);
    assert.match(body, /<rect class="series-uploads"[^>]*><title>\d{4}-\d{2}-\d{2}: \d+<\/title><\/rect>/);
    assert.match(body, /Bytes served per day/);
    assert.doesNotMatch(body, /no chart yet/);
  });
});

describe("operator console over HTTP: bytes served per day, on the server's clock", () => {
  let t: TestServer;
  let operator: Browser;
  const clock = new TestClock(Date.parse('2026-11-20T23:58:00Z'));

  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000 }, clock);
    const login = `served-admin-${process.pid}`;
    await t.server.services.accounts.create({ login, password: 'operator password', isOperator: true });
    operator = new Browser(t.url);
    redirect(await operator.signIn(login, 'operator password'), '/accounts/profile/misc');
  });
  after(() => t.close());

  test("a download adds its bytes to the day the server's clock is in, and the chart shows each day's", async () => {
    const owner = await t.account();
    const uploaded = await t.upload(owner.key, 'served.bin', 'x'.repeat(5000));
    const served = () => t.server.services.store.housekeeping.stats().then((s) => s.bytesServed);
    // The bytes are counted once the body is sent, after the response: wait for them.
    const fetchOnce = async (expected: number) => {
      assert.equal((await download(`${uploaded.downloadLink}?download=1`)).body.length, 5000);
      await eventually(async () => (await served()) === expected, `${expected} bytes counted`);
    };
    await fetchOnce(5000);
    clock.set('2026-11-21T10:04:05Z');
    await fetchOnce(10_000);
    await fetchOnce(15_000);
    const body = page(await operator.get('/console?days=7'));
    const bars = [...body.matchAll(/<rect class="series-served"[^>]*><title>([^<]*)<\/title><\/rect>/g)].map((m) => m[1]);
    assert.deepEqual(bars.slice(-3), ['2026-11-19: 0 B', `2026-11-20: ${humanSize(5000)}`, `2026-11-21: ${humanSize(10_000)}`], body);
    assert.equal(bars.length, 7);
  });
});
