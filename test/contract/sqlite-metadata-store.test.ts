import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { openSqlite, SQLITE_FILE } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import { listingQueries } from './listing-queries.js';
import { metadataStoreContract } from './metadata-store.contract.js';
import { sqliteHarness } from './metadata-store-harnesses.js';

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

test('SQLite: a listing page after a cursor is one index range, already in order', async () => {
  // SQLite plans without statistics (the server never runs ANALYZE), so the plan on this
  // empty database is the plan on a million rows: an OR form of the cursor showed here as
  // `SEARCH files USING INDEX files_owner (owner_id=?)` plus a sort, and read every row
  // newer than the cursor.
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-sqlite-'));
  try {
    await (await openMetadataStore(openSqlite(dir))).close();
    const db = new Database(path.join(dir, SQLITE_FILE), { readonly: true });
    try {
      for (const { name, query } of await listingQueries('sqlite')) {
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).all(...query.parameters) as { detail: string }[]).map((row) => row.detail);
        assert.equal(plan.length, 1, `${name}: one step, no sort: ${plan.join(' | ')}`);
        assert.match(plan[0]!, /^SEARCH (files|folders) USING INDEX \w+ \(.*\(created_at,id\)<\(\?,\?\)\)$/, `${name}: the cursor bounds the index search`);
      }
    } finally {
      db.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('SQLite group commit: a result comes once its COMMIT is done, as a second connection sees', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-sqlite-'));
  const store = await openMetadataStore(openSqlite(dir));
  const reader = new Database(path.join(dir, SQLITE_FILE), { readonly: true });
  try {
    const listed = reader.prepare('select count(*) as n from blacklist where sha256 = ?');
    const seen = (sha: string) => (listed.get(sha) as { n: number }).n === 1;
    const shas = Array.from({ length: 40 }, (_, i) => i.toString(16).padStart(2, '0').repeat(32));
    const early: string[] = [];
    await Promise.all(
      shas.map((sha) =>
        store
          .transaction(async (repos) => {
            await repos.blacklist.add(sha, '', 1);
            // Written, not committed: a second connection does not see it yet.
            if (seen(sha)) early.push(sha);
          })
          .then(() => assert.equal(seen(sha), true, 'committed when the result comes')),
      ),
    );
    assert.deepEqual(early, []);
  } finally {
    reader.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
