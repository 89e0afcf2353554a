import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SessionService } from '../../src/auth/session-service.js';
import { openSqlite } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { cryptoIds } from '../../src/domain/ids.js';
import { ServerSecrets } from '../../src/security/secrets.js';
import { AccountsService } from '../../src/services/accounts-service.js';
import { TestClock } from '../helpers/server.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

describe('SessionService', () => {
  let dir: string;
  let store: MetadataStore;
  const clock = new TestClock();
  const secrets = new ServerSecrets('unit-secret-0123456789');
  let accounts: AccountsService;
  let sessions: SessionService;
  let accountId: number;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'filehaven-sessions-'));
    store = await openMetadataStore(openSqlite(dir));
    accounts = new AccountsService({ store, secrets, ids: cryptoIds, clock: clock.fn });
    sessions = new SessionService({ store, accounts, secrets, clock: clock.fn });
    accountId = (await accounts.create({ login: 'unit', password: 'long enough pw' })).id;
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a session token is 256 random bits; only its SHA-256 is stored', async () => {
    const { token, expiresAt } = await sessions.start(accountId);
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(expiresAt, clock.now + 30 * DAY);
    const row = await store.sessions.byId(createHash('sha256').update(token).digest('hex'));
    assert.equal(row?.accountId, accountId);
    assert.match(row?.csrfSecret ?? '', /^[0-9a-f]{64}$/);
    assert.notEqual((await sessions.start(accountId)).token, token);
  });

  test('resume: the account, the CSRF token; malformed and unknown tokens are null', async () => {
    const { token } = await sessions.start(accountId);
    const session = await sessions.resume(token);
    assert.equal(session?.account.login, 'unit');
    assert.match(session?.csrfToken ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(session?.renewed, false);
    for (const bad of [undefined, '', 'short', `${token}x`, 'A'.repeat(43), token.replace(/.$/, '!')]) {
      assert.equal(await sessions.resume(bad), null, String(bad));
    }
  });

  test('use is recorded at most every 5 minutes', async () => {
    const { token } = await sessions.start(accountId);
    clock.advance(4 * MINUTE);
    assert.equal((await sessions.resume(token))?.renewed, false);
    clock.advance(MINUTE);
    const renewed = await sessions.resume(token);
    assert.equal(renewed?.renewed, true);
    assert.equal(renewed?.expiresAt, clock.now + 30 * DAY);
  });

  test("checkCsrf: only the session's own token, in full", async () => {
    const one = (await sessions.resume((await sessions.start(accountId)).token))!;
    const two = (await sessions.resume((await sessions.start(accountId)).token))!;
    assert.notEqual(one.csrfToken, two.csrfToken);
    assert.equal(sessions.checkCsrf(one, one.csrfToken), true);
    assert.equal(sessions.checkCsrf(one, two.csrfToken), false);
    assert.equal(sessions.checkCsrf(one, one.csrfToken.slice(0, -1)), false);
    assert.equal(sessions.checkCsrf(one, undefined), false);
    assert.equal(sessions.checkCsrf(one, [one.csrfToken]), false);
  });

  test('a pre-session is reused for its first hour, then replaced; it lives two hours', () => {
    const first = sessions.preSession(undefined);
    assert.match(first.cookie, /^[A-Za-z0-9_-]{43}\.[0-9a-z]+$/);
    assert.equal(sessions.checkPreSessionCsrf(first.cookie, first.csrfToken), true);
    clock.advance(59 * MINUTE);
    assert.equal(sessions.preSession(first.cookie).cookie, first.cookie);
    clock.advance(2 * MINUTE);
    const second = sessions.preSession(first.cookie);
    assert.notEqual(second.cookie, first.cookie);
    // The old one still works until its two hours are over.
    assert.equal(sessions.checkPreSessionCsrf(first.cookie, first.csrfToken), true);
    clock.advance(60 * MINUTE);
    assert.equal(sessions.checkPreSessionCsrf(first.cookie, first.csrfToken), false);
    assert.equal(sessions.checkPreSessionCsrf(second.cookie, second.csrfToken), true);
  });

  test('pre-session tokens are bound to their cookie, their purpose and the server secret', () => {
    const pre = sessions.preSession(undefined);
    const other = sessions.preSession(undefined);
    assert.equal(sessions.checkPreSessionCsrf(other.cookie, pre.csrfToken), false);
    assert.equal(sessions.checkPreSessionCsrf(undefined, pre.csrfToken), false);
    assert.equal(sessions.checkPreSessionCsrf(pre.cookie, undefined), false);
    // A cookie from the future (clock skew, forged time) is refused.
    const future = `${'A'.repeat(43)}.${(clock.now + MINUTE).toString(36)}`;
    assert.equal(sessions.checkPreSessionCsrf(future, secrets.csrfToken('pre-session', future)), false);
    assert.notEqual(secrets.csrfToken('session', pre.cookie), pre.csrfToken);
    assert.notEqual(new ServerSecrets('another-secret-0123456789').csrfToken('pre-session', pre.cookie), pre.csrfToken);
  });

  test('endAll ends every session of the account', async () => {
    const a = await sessions.start(accountId);
    const b = await sessions.start(accountId);
    assert.ok((await sessions.endAll(accountId)) >= 2);
    assert.equal(await sessions.resume(a.token), null);
    assert.equal(await sessions.resume(b.token), null);
  });
});
