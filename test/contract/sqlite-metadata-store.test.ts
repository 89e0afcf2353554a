import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openSqlite } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import { sqliteHarness } from './metadata-store-harnesses.js';
import { metadataStoreContract } from './metadata-store.contract.js';

metadataStoreContract('SQLite', sqliteHarness);

test('SQLite: reopening a data folder keeps the rows and migrates only once', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-sqlite-'));
  try {
    const first = await openMetadataStore(openSqlite(dir));
    const created = await first.accounts.create({
      login: 'persisted',
      passwordHash: 'h',
      name: '',
      email: '',
      premiumStart: null,
      premiumEnd: null,
      trafficLeft: 7,
      isOperator: false,
      createdAt: 1,
    });
    await first.close();
    const second = await openMetadataStore(openSqlite(dir));
    try {
      assert.deepEqual(await second.accounts.byLogin('persisted'), created);
    } finally {
      await second.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
