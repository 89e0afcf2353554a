import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openSqlite } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { KNOWN_ADDRESS_MS, KnownSignInAddresses } from '../../src/limits/known-sign-in-addresses.js';
import { ServerSecrets } from '../../src/security/secrets.js';
import { TestClock } from '../helpers/server.js';

describe('known sign-in addresses (real SQLite)', () => {
  let dir: string;
  let store: MetadataStore;
  const clock = new TestClock();
  const secrets = new ServerSecrets('a test secret of enough length');
  let known: KnownSignInAddresses;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'filehaven-known-'));
    store = await openMetadataStore(openSqlite(dir));
    known = new KnownSignInAddresses({ repository: store.signInAddresses, clock: clock.fn, hash: (text) => secrets.sign(text) });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('knows an address for the login it signed in to, for 90 days', async () => {
    await known.remember('login-a', '198.51.100.7');
    assert.equal(await known.isKnown('login-a', '198.51.100.7'), true);
    assert.equal(await known.isKnown('login-b', '198.51.100.7'), false, 'per login');
    assert.equal(await known.isKnown('login-a', '198.51.100.8'), false, 'per address');
    clock.advance(KNOWN_ADDRESS_MS - 1000);
    assert.equal(await known.isKnown('login-a', '198.51.100.7'), true);
    clock.advance(2000);
    assert.equal(await known.isKnown('login-a', '198.51.100.7'), false, 'forgotten after 90 days');
  });

  it('counts IPv6 by /64, and stores neither login nor address', async () => {
    await known.remember('login-c', '2001:db8:5:6::1');
    assert.equal(await known.isKnown('login-c', '2001:db8:5:6:ffff::9'), true);
    assert.equal(await known.isKnown('login-c', '2001:db8:5:7::1'), false);
    const { db } = openSqlite(dir);
    const rows = await db.selectFrom('sign_in_addresses').selectAll().execute();
    await db.destroy();
    assert.ok(rows.length >= 1);
    for (const row of rows) assert.doesNotMatch(row.id, /login|2001|198\.51/);
  });

  it('prune forgets what is older than 90 days', async () => {
    await known.remember('login-d', '203.0.113.1');
    clock.advance(KNOWN_ADDRESS_MS + 1);
    await known.remember('login-e', '203.0.113.2');
    assert.ok((await store.signInAddresses.prune(clock.now - KNOWN_ADDRESS_MS)) >= 1);
    assert.equal(await known.isKnown('login-e', '203.0.113.2'), true);
  });
});
