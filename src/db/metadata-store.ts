import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { type Kysely, sql } from 'kysely';
import type { Database } from './database.js';
import { type Engine, type OpenedDatabase, sqliteWalFile } from './dialect.js';
import { type CommitHooks, GroupCommit, immediateHooks, PendingHooks } from './group-commit.js';
import { migrateToLatest } from './migrator.js';
import { accountsRepository } from './repositories/accounts-repository.js';
import { blacklistRepository, blobsRepository } from './repositories/blobs-repository.js';
import { davLocksRepository } from './repositories/dav-locks-repository.js';
import { davPropertiesRepository } from './repositories/dav-properties-repository.js';
import { filesRepository } from './repositories/files-repository.js';
import { foldersRepository } from './repositories/folders-repository.js';
import { identitiesRepository } from './repositories/identities-repository.js';
import { locksRepository } from './repositories/locks-repository.js';
import { auditRepository, housekeepingRepository, serverSettingsRepository, uploadLogRepository } from './repositories/operations-repository.js';
import { operatorQueriesRepository } from './repositories/operator-queries-repository.js';
import { passkeysRepository } from './repositories/passkeys-repository.js';
import type { MetadataStore, Repositories } from './repositories/repositories.js';
import { reservationsRepository } from './repositories/reservations-repository.js';
import { resumableUploadsRepository, uploadLocksRepository } from './repositories/resumable-uploads-repository.js';
import { runLeasesRepository } from './repositories/run-leases-repository.js';
import { secondFactorsRepository } from './repositories/second-factors-repository.js';
import { servedDaysRepository } from './repositories/served-days-repository.js';
import { sessionsRepository } from './repositories/sessions-repository.js';
import { sharesRepository } from './repositories/shares-repository.js';
import { signInAddressesRepository } from './repositories/sign-in-addresses-repository.js';
import { signInChallengesRepository } from './repositories/sign-in-challenges-repository.js';
import { siteDaysRepository } from './repositories/site-days-repository.js';
import { uploadRequestsRepository } from './repositories/upload-requests-repository.js';

function repositories(db: Kysely<Database>, engine: Engine, commit: CommitHooks): Repositories {
  return {
    commit,
    accounts: accountsRepository(db),
    files: filesRepository(db, engine),
    folders: foldersRepository(db),
    blobs: blobsRepository(db),
    blacklist: blacklistRepository(db),
    uploadLog: uploadLogRepository(db),
    audit: auditRepository(db),
    operatorQueries: operatorQueriesRepository(db, engine),
    housekeeping: housekeepingRepository(db, engine),
    serverSettings: serverSettingsRepository(db),
    sessions: sessionsRepository(db),
    signInAddresses: signInAddressesRepository(db),
    reservations: reservationsRepository(db, engine),
    runLeases: runLeasesRepository(db),
    resumableUploads: resumableUploadsRepository(db),
    uploadLocks: uploadLocksRepository(db),
    servedDays: servedDaysRepository(db),
    siteDays: siteDaysRepository(db),
    shares: sharesRepository(db),
    signInChallenges: signInChallengesRepository(db),
    passkeys: passkeysRepository(db),
    secondFactors: secondFactorsRepository(db),
    uploadRequests: uploadRequestsRepository(db),
    locks: locksRepository(db, engine),
    identities: identitiesRepository(db),
    davLocks: davLocksRepository(db),
    davProperties: davPropertiesRepository(db),
  };
}

/** How the store tells of a failure nobody awaits (a store broken by a failed fsync). */
export interface MetadataStoreOptions {
  report?: (error: unknown, message: string) => void;
  /** The fsync of SQLite's WAL through its descriptor (tests make it fail); `wal.sync()` by default. */
  syncWal?: (wal: FileHandle) => Promise<void>;
}

/** What a broken store logs, once: the operator must restart (docs/operating.md). */
export const BROKEN_MESSAGE =
  'the database can no longer promise durability (an fsync of its WAL or a COMMIT failed on I/O): every write fails until the server is restarted';

/** Migrates the database and wraps it as the MetadataStore the services use. */
export async function openMetadataStore({ db, engine, schema, connections }: OpenedDatabase, options: MetadataStoreOptions = {}): Promise<MetadataStore> {
  const report = options.report ?? ((error, message) => console.error(message, error));
  let newerMigrations: string[];
  let run: Transactions;
  try {
    ({ newer: newerMigrations } = await migrateToLatest(db, schema));
    run = await transactions(db, engine, report, options.syncWal ?? ((wal) => wal.sync()));
  } catch (error) {
    await db.destroy().catch(() => {});
    throw error;
  }
  return {
    ...repositories(db, engine, immediateHooks),
    engine,
    newerMigrations,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    transaction: run.transaction,
    durabilityLost: run.durabilityLost,
    connections,
    close: async () => {
      try {
        await db.destroy();
      } finally {
        await run.close();
      }
    },
  };
}

interface Transactions {
  transaction: MetadataStore['transaction'];
  durabilityLost: MetadataStore['durabilityLost'];
  close(): Promise<void>;
}

/**
 * How the store runs transactions. SQLite: group commit (group-commit.ts), as its one
 * connection runs them one at a time anyway and each COMMIT's fsync was the cost; the WAL
 * is fsynced through one descriptor opened now and kept until the store closes, so a
 * write-back error is reported to it whenever it happens (Linux tells the descriptors open
 * at the time), and no later open of the file (EMFILE) can fail a commit.
 * PostgreSQL: each on a connection of its own, in parallel, the hooks run before COMMIT.
 */
async function transactions(
  db: Kysely<Database>,
  engine: Engine,
  report: NonNullable<MetadataStoreOptions['report']>,
  syncWal: NonNullable<MetadataStoreOptions['syncWal']>,
): Promise<Transactions> {
  if (engine === 'sqlite') {
    const wal = await fs.open(await sqliteWalFile(db), 'r');
    const group = new GroupCommit(
      db,
      () => syncWal(wal),
      (error) => report(error, BROKEN_MESSAGE),
    );
    return {
      transaction: (work, options) => group.run((trx, hooks) => work(repositories(trx, engine, hooks)), { first: options?.readsDurable }),
      durabilityLost: () => group.failure,
      close: async () => {
        await group.settle();
        await wal.close();
      },
    };
  }
  // What a transaction reads on PostgreSQL is committed, and so durable, already.
  return {
    transaction: (work) =>
      db.transaction().execute(async (trx) => {
        const hooks = new PendingHooks();
        const result = await work(repositories(trx, engine, hooks));
        await hooks.run();
        return result;
      }),
    durabilityLost: () => null,
    close: async () => {},
  };
}
