import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestServer } from '../helpers/server.js';

const DAY_MS = 86_400_000;

// Premium changes read the period and write it back: two at once (the CLI and the
// console, two operators) must both count, on every backend. On PostgreSQL they run on
// different connections, and only the account's premium lock orders them.
test('concurrent premium changes of one account all count: extensions, shortenings, traffic', async () => {
  const t = await startTestServer();
  try {
    const { accounts } = t.server.services;
    const { login } = await t.account({ premiumDays: 30, trafficBytes: 0 });
    const before = await accounts.byLoginOrFail(login);
    // 10 extensions of 2 days with 1,000 bytes each, and 10 shortenings of 1 day, all at once.
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? accounts.extendPremium(login, 2, 1000) : accounts.extendPremium(login, -1, 0))));
    const after = await accounts.byLoginOrFail(login);
    assert.equal(after.premiumEnd! - before.premiumEnd!, 10 * DAY_MS, 'every change counted once');
    assert.equal(after.trafficLeft - before.trafficLeft, 10_000);

    // Ending now and adding traffic is one step too: the traffic of a racing end counts.
    await Promise.all([accounts.endPremium(login, 500), accounts.extendPremium(login, 0, 700), accounts.endPremium(login, 300)]);
    const ended = await accounts.byLoginOrFail(login);
    assert.equal(accounts.isPremium(ended), false);
    assert.equal(ended.trafficLeft - after.trafficLeft, 1500);
  } finally {
    await t.close();
  }
});
