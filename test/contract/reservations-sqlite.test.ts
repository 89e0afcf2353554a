import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openSqlite } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import { sqliteHarness } from './metadata-store-harnesses.js';
import { reservationsContract } from './reservations.contract.js';

reservationsContract('SQLite', sqliteHarness);

// A checkpoint commits without an fsync (reservations-repository.ts says why); every other
// statement of the one connection must still commit with synchronous = FULL (2), also when
// checkpoints and other statements queue on the connection at once.
test('SQLite: checkpoints land, and leave the connection committing with synchronous FULL', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-sqlite-'));
  const opened = openSqlite(dir);
  const store = await openMetadataStore(opened);
  try {
    const { id: accountId } = await store.accounts.create({
      login: 'reserver',
      passwordHash: 'scrypt$1$1$1$c2FsdA==$aGFzaA==',
      name: 'R',
      email: 'r@example.com',
      premiumStart: 0,
      premiumEnd: Date.now() + 86_400_000,
      trafficLeft: 1000,
      isOperator: false,
      createdAt: 0,
    });
    const row = { accountId, kind: 'traffic' as const, planned: 100, server: 's', instance: 'i', leaseUntil: Date.now() + 60_000, createdAt: Date.now() };
    const id = await store.reservations.open(row);
    const level = async () => (await sql<{ synchronous: number }>`pragma synchronous`.execute(opened.db)).rows[0]!.synchronous;
    assert.equal(await level(), 2, 'FULL before');
    const seen = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? store.reservations.checkpoint(id, i) : level())));
    for (const [i, value] of seen.entries()) {
      if (i % 2 === 0) assert.equal(value, true, `checkpoint ${i} landed`);
      else assert.equal(value, 2, `a statement queued beside checkpoints (${i}) ran under FULL`);
    }
    assert.equal(await level(), 2, 'FULL after');
    assert.equal((await store.reservations.take(id))?.settled, 18, 'the last checkpoint is the one kept');
    assert.equal(await store.reservations.checkpoint(id, 5), false, 'a row settled meanwhile takes no checkpoint');
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
