import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestServer } from '../helpers/server.js';

test('/readyz answers 503 once the database lost durability (a failed fsync of its WAL), and says to restart', async () => {
  const t = await startTestServer();
  try {
    assert.equal((await t.fetch('/readyz')).status, 200);
    // What the store reports after a failed fsync (test/contract/sqlite-group-commit.test.ts
    // makes a real one fail): here set by hand, to see what the route makes of it.
    const store = t.server.services.store;
    store.durabilityLost = () => Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    // Past the route's one-second cache of the last answer.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const response = await t.fetch('/readyz');
    assert.equal(response.status, 503);
    assert.match(await response.text(), /^not ready: .*durability.*restart/);
  } finally {
    await t.close();
  }
});
