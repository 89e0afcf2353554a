import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openPostgres, openSqlite } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { createTestSchema, POSTGRES_TEST_URL } from '../helpers/postgres-test-schema.js';
import type { MetadataStoreFactory } from './metadata-store.contract.js';

/**
 * A fresh SQLite store in a temp folder. better-sqlite3 is synchronous: a second
 * connection in this thread that waits for the write lock would block the event loop, and
 * so the holder, until busy_timeout. The peer "server" is the same connection: its
 * transactions queue on it (BEGIN IMMEDIATE), interleaved with the first one's at every
 * await; two processes on one file are covered by the CLI tests that run beside a server.
 */
export const sqliteHarness: MetadataStoreFactory = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-sqlite-'));
  const store = await openMetadataStore(openSqlite(dir));
  return {
    store,
    openPeer: async () => store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

/**
 * A fresh SQLite store whose peers are real second connections on the same file: for
 * rules that are ONE statement (a conditional UPDATE, a DELETE ... RETURNING), never a
 * transaction held across an await, so a peer waits for the lock only for the length of a
 * statement and the race between two servers is the real one.
 */
export const sqliteTwoConnectionsHarness: MetadataStoreFactory = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-sqlite-'));
  const store = await openMetadataStore(openSqlite(dir));
  const peers: MetadataStore[] = [];
  return {
    store,
    async openPeer() {
      const peer = await openMetadataStore(openSqlite(dir));
      peers.push(peer);
      return peer;
    },
    async cleanup() {
      for (const s of [store, ...peers]) await s.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

/** A fresh PostgreSQL schema; each peer is another server, with its own pool on the same schema. */
export const postgresHarness: MetadataStoreFactory = async () => {
  const { schema, drop } = await createTestSchema();
  const open = () => openMetadataStore(openPostgres({ url: POSTGRES_TEST_URL, schema, poolSize: 8 }));
  const store = await open();
  const peers: MetadataStore[] = [];
  return {
    store,
    async openPeer() {
      const peer = await open();
      peers.push(peer);
      return peer;
    },
    async cleanup() {
      await Promise.all([store, ...peers].map((s) => s.close()));
      await drop();
    },
  };
};
