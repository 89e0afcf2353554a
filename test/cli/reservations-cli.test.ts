import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertOk, runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const MiB = 1024 * 1024;

// `filehaven reservations` lists the transfers in flight; `filehaven gc` settles those a
// dead server left once their lease has run out, and leaves live ones alone.
describe('filehaven reservations', { concurrency: 1, timeout: 60_000 }, () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ gcIntervalMs: 0 });
  });
  after(() => t?.close());

  const cli = (...args: string[]) => runCli([...args, '--data', t.dataDir]);

  test('lists open rows with their account, progress and lease; gc settles only the expired ones', async () => {
    assert.equal(assertOk(await cli('reservations')).trim(), 'no open reservations');
    const { account, key } = await t.account({ login: 'grace', premiumDays: 30, trafficBytes: 100 * MiB });
    const { store } = t.server.services;
    const now = Date.now();
    // A live server's download, and one of a server that died a minute ago with 3 MiB sent.
    const taken = async (planned: number, row: { server: string; instance: string; leaseUntil: number }) => {
      assert.ok(await store.accounts.reserveTraffic(account.id, planned));
      return store.reservations.open({ accountId: account.id, kind: 'traffic', planned, createdAt: now - 90_000, ...row });
    };
    const live = await taken(10 * MiB, { server: 'web-1', instance: 'aaaaaaaa-live', leaseUntil: now + 60_000 });
    const dead = await taken(20 * MiB, { server: 'web-2', instance: 'bbbbbbbb-dead', leaseUntil: now - 30_000 });
    assert.ok(await store.reservations.checkpoint(dead, 3 * MiB));

    const listed = JSON.parse(assertOk(await cli('reservations', '--json')));
    assert.equal(listed.truncated, false);
    assert.deepEqual(
      listed.reservations.map((r: Record<string, unknown>) => [r.id, r.login, r.kind, r.planned, r.settled, r.server, r.expired]),
      [
        [live, 'grace', 'traffic', 10 * MiB, 0, 'web-1', false],
        [dead, 'grace', 'traffic', 20 * MiB, 3 * MiB, 'web-2', true],
      ],
    );
    const text = assertOk(await cli('reservations'));
    assert.match(text, /^ID\s+ACCOUNT\s+KIND\s+PLANNED\s+CHECKPOINT\s+SERVER\s+PROCESS\s+LEASE\s+AGE$/m);
    assert.match(text, new RegExp(`^${dead}\\s+grace\\s+traffic\\s+20\\.0 MiB\\s+3\\.0 MiB\\s+web-2\\s+bbbbbbbb\\s+expired \\d+s ago\\s+\\d+s$`, 'm'));

    const report = JSON.parse(assertOk(await cli('gc', '--json')));
    assert.equal(report.reservationsSettled, 1);
    assert.equal(report.trafficRefunded, 17 * MiB);
    const after = JSON.parse(assertOk(await cli('reservations', '--json')));
    assert.deepEqual(
      after.reservations.map((r: { id: number }) => r.id),
      [live],
    );
    // 100 MiB, less the live download's 10 MiB, less the 3 MiB the dead one sent.
    const account2 = await t.fetch('/account', { headers: { Authorization: key } });
    assert.match(await account2.text(), new RegExp(`<ed:premium_trafficLeft>${87 * MiB}</ed:premium_trafficLeft>`));
  });
});
