// GET /account (SPEC.md "GET /account", "Account"; API.md 3 and 5).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, assertAtomOk, type ReadResponse, read } from '../helpers/api-checks.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const DAY = 86_400_000;
let t: TestServer;
let clock: TestClock;
before(async () => {
  clock = new TestClock(Date.parse('2026-11-21T10:04:05Z'));
  t = await startTestServer({}, clock);
});
after(() => t.close());

const getAccount = async (key: string): Promise<ReadResponse> => read(await t.fetch('/account', { headers: { Authorization: key } }));

/** The entry's lines, which API.md 3 fixes exactly (order, indentation, open and close tags). */
function entryLines(body: string): string[] {
  const match = /\n {2}<entry>\n([\s\S]*?)\n {2}<\/entry>\n/.exec(body);
  assert.ok(match, body);
  return match[1]!.split('\n');
}

describe('GET /account', () => {
  test('a premium account: Active, start and end in UTC, traffic left, balance 0.00, in the exact entry shape', async () => {
    clock.set('2026-11-21T10:04:05Z');
    const { account, key } = await t.account({ premiumDays: 30, trafficBytes: 10_737_418_240, name: 'Ada Lovelace', email: 'ada@example.org' });
    const response = await getAccount(key);
    assertAtomOk(response, 200, 'Account Info');
    assert.deepEqual(entryLines(response.body), [
      `    <id>${account.id}</id>`,
      '    <ed:name>Ada Lovelace</ed:name>',
      '    <ed:email>ada@example.org</ed:email>',
      '    <ed:balance>0.00</ed:balance>',
      '    <ed:premium>Active</ed:premium>',
      '    <ed:premium_start>2026-11-21 10:04:05</ed:premium_start>',
      '    <ed:premium_end>2026-12-21 10:04:05</ed:premium_end>',
      '    <ed:premium_trafficLeft>10737418240</ed:premium_trafficLeft>',
    ]);
  });

  test('each key sees its own account', async () => {
    const a = await t.account({ name: 'First' });
    const b = await t.account({ name: 'Second' });
    const feedA = assertAtomOk(await getAccount(a.key), 200, 'Account Info');
    const feedB = assertAtomOk(await getAccount(b.key), 200, 'Account Info');
    assert.equal(feedA.entry.id, String(a.account.id));
    assert.equal(feedB.entry.id, String(b.account.id));
    assert.notEqual(feedA.entry.id, feedB.entry.id);
    assert.equal(feedA.entry['ed:name'], 'First');
    assert.equal(feedB.entry['ed:name'], 'Second');
  });

  test('Active until just before the end, Expired at and after it; the dates stay', async () => {
    clock.set('2026-01-10T00:00:00Z');
    const { key } = await t.account({ premiumDays: 2, trafficBytes: 500 });
    const at = (iso: string) => {
      clock.set(iso);
      return getAccount(key);
    };
    assert.equal(assertAtomOk(await at('2026-01-11T23:59:59Z'), 200, 'Account Info').entry['ed:premium'], 'Active');
    for (const iso of ['2026-01-12T00:00:00Z', '2026-01-12T00:00:01Z', '2027-06-01T00:00:00Z']) {
      const feed = assertAtomOk(await at(iso), 200, 'Account Info');
      assert.equal(feed.entry['ed:premium'], 'Expired', iso);
      assert.equal(feed.entry['ed:premium_start'], '2026-01-10 00:00:00');
      assert.equal(feed.entry['ed:premium_end'], '2026-01-12 00:00:00');
      assert.equal(feed.entry['ed:premium_trafficLeft'], '500');
    }
  });

  test('expired premium loses the premium operations (403), keeps the others', async () => {
    clock.set('2026-03-01T00:00:00Z');
    const { key } = await t.account({ premiumDays: 1 });
    const up = await t.upload(key, 'e.txt', 'expiring');
    assert.equal(up.response.status, 201, up.body);
    assert.equal((await read(await t.fetch(`/files/${up.id}`, { headers: { Authorization: key } }))).status, 200);
    clock.advance(DAY);
    assertAtomError(await read(await t.fetch(`/files/${up.id}`, { headers: { Authorization: key } })), 403, 'errorPermissionDenied', /premium/i);
    assertAtomError(await read(await t.fetch(`/files/${up.id};DirectLink`, { headers: { Authorization: key } })), 403, 'errorPermissionDenied', /premium/i);
    assert.equal((await getAccount(key)).status, 200);
    const copy = await read(await t.fetch(`/files/copy/${up.id}`, { method: 'POST', headers: { Authorization: key } }));
    assert.equal(copy.status, 201, copy.body);
  });

  test('a never-premium account: None, empty date elements written open and close, traffic 0', async () => {
    clock.set('2026-11-21T10:04:05Z');
    const { account, key } = await t.account();
    const response = await getAccount(key);
    assertAtomOk(response, 200, 'Account Info');
    assert.deepEqual(entryLines(response.body), [
      `    <id>${account.id}</id>`,
      '    <ed:name></ed:name>',
      '    <ed:email></ed:email>',
      '    <ed:balance>0.00</ed:balance>',
      '    <ed:premium>None</ed:premium>',
      '    <ed:premium_start></ed:premium_start>',
      '    <ed:premium_end></ed:premium_end>',
      '    <ed:premium_trafficLeft>0</ed:premium_trafficLeft>',
    ]);
    assert.doesNotMatch(response.body, /<ed:[a-z_A-Z]+\/>/, 'no self-closed elements');
  });

  test('premium extended by the operator after expiry is Active again from now', async () => {
    clock.set('2026-05-01T00:00:00Z');
    const { login, key } = await t.account({ premiumDays: 1 });
    clock.set('2026-05-10T12:00:00Z');
    assert.equal(assertAtomOk(await getAccount(key), 200, 'Account Info').entry['ed:premium'], 'Expired');
    await t.server.services.accounts.extendPremium(login, 3, 1000);
    const feed = assertAtomOk(await getAccount(key), 200, 'Account Info');
    assert.equal(feed.entry['ed:premium'], 'Active');
    assert.equal(feed.entry['ed:premium_start'], '2026-05-10 12:00:00');
    assert.equal(feed.entry['ed:premium_end'], '2026-05-13 12:00:00');
    assert.equal(feed.entry['ed:premium_trafficLeft'], '1000');
  });

  test('a missing or unknown key: 401 errorPermissionDenied "Wrong apikey"', async () => {
    assertAtomError(await read(await t.fetch('/account')), 401, 'errorPermissionDenied', 'Wrong apikey');
    assertAtomError(await getAccount('Z'.repeat(32)), 401, 'errorPermissionDenied', 'Wrong apikey');
  });
});
