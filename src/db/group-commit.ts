import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.js';

/** Work a transaction hands to its COMMIT: durability its rows depend on (a folder's fsync). */
export interface CommitHooks {
  /**
   * Runs `task` before the transaction's COMMIT, once per `key` however often the key is
   * given; the tasks of a COMMIT run in parallel, and the COMMIT does not happen if one of
   * them fails. Outside a transaction the task runs now, and this resolves when it is done.
   */
  beforeCommit(key: string, task: () => Promise<void>): Promise<void>;
}

/** Hooks that run their task at once: the store's own, outside any transaction. */
export const immediateHooks: CommitHooks = {
  beforeCommit: (_key, task) => task(),
};

/** The hooks one transaction registered, by key (the first task of a key wins). */
export class PendingHooks implements CommitHooks {
  readonly tasks = new Map<string, () => Promise<void>>();

  beforeCommit(key: string, task: () => Promise<void>): Promise<void> {
    if (!this.tasks.has(key)) this.tasks.set(key, task);
    return Promise.resolve();
  }

  /** Takes the other transaction's hooks into this one's COMMIT. */
  merge(other: PendingHooks): void {
    for (const [key, task] of other.tasks) if (!this.tasks.has(key)) this.tasks.set(key, task);
  }

  /**
   * Runs every task, in parallel, and rejects with the first failure once all have ended
   * (none is left running when the transaction rolls back).
   */
  async run(): Promise<void> {
    const outcomes = await Promise.allSettled([...this.tasks.values()].map((task) => task()));
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/** The statements around each work of a batch, compiled once: two of them per upload (issue 28). */
const SAVEPOINT = CompiledQuery.raw('savepoint batch_item');
const RELEASE = CompiledQuery.raw('release batch_item');
const ROLLBACK_TO = CompiledQuery.raw('rollback to batch_item');
const SYNCHRONOUS_NORMAL = CompiledQuery.raw('pragma synchronous = normal');
const SYNCHRONOUS_FULL = CompiledQuery.raw('pragma synchronous = full');

/** One transaction's work, as a batch runs it. */
export type BatchWork<T> = (trx: Transaction<Database>, hooks: CommitHooks) => Promise<T>;

interface Queued {
  work: BatchWork<unknown>;
  /** Runs first of its batch, once every earlier batch is durable. */
  first: boolean;
  settle: (outcome: Outcome) => void;
}

/** Transactions one COMMIT takes at most, so a batch's length (and its last caller's wait) stays bounded. */
export const MAX_BATCH = 64;

/**
 * Group commit for SQLite (issue 28): the transactions that queue while a batch runs run
 * together in the next BEGIN IMMEDIATE … COMMIT, one after another, each in a SAVEPOINT of
 * its own, and share one fsync of the WAL. With one connection they ran one at a time
 * already; each paid its own fsync, made by better-sqlite3 on the main thread
 * (synchronous = FULL), which stalled the whole server for the length of each one.
 *
 * The batch commits with synchronous = NORMAL (SQLite writes the WAL, no fsync) and then
 * fsyncs the WAL file from libuv's thread pool: FULL is exactly NORMAL plus that fsync
 * after the commit (sqlite.org/pragma.html#pragma_synchronous). Meanwhile the next batch
 * runs. A checkpoint stays as safe as before: SQLite syncs the WAL before it copies pages
 * and the database file after, so a commit it moves is durable there even if the WAL
 * restarts over it before our fsync.
 *
 * Every rule of a transaction of its own still holds:
 *   - isolation: they run in order, each seeing the ones before it, as one after another
 *     would; a work that throws is rolled back to its savepoint alone and gets its own
 *     error, and the others go on;
 *   - durability before the answer: every caller hears once the WAL holding its COMMIT is
 *     fsynced, never before. A COMMIT, a hook or that fsync that fails fails every
 *     transaction of the batch that had not failed on its own. After a failed fsync of the
 *     WAL, or a COMMIT that fails on I/O (SQLITE_IOERR, SQLITE_FULL: its rows may have
 *     landed, an auto-checkpoint after them may have failed), nothing can be promised
 *     durable any more (the kernel may have dropped the pages, and Linux reports a
 *     write-back error once): the store is broken, every later transaction fails too,
 *     readiness fails, and only a restart, which recovers from the WAL, clears it
 *     (PostgreSQL's own stance after a failed fsync). The WAL is fsynced through one file
 *     descriptor held from the start: Linux reports a write-back error to the descriptors
 *     open when it happened, and no open() (EMFILE) can fail a commit;
 *   - hooks run once all works are done and before COMMIT, so what they make durable (a
 *     published blob's folder) is durable before any row that names it can be;
 *   - a work that acts outside the database on what it reads (removing bytes once no row
 *     names them) runs first of its batch, and its batch fsyncs the WAL right after BEGIN
 *     IMMEDIATE, before the work reads (`first`): a row dropped by a transaction not yet
 *     durable (of an earlier batch, or of another process on the same file: the operator's
 *     CLI) would come back after a crash, without its bytes. Before BEGIN would not do: a
 *     commit of another process could land between that fsync and the lock.
 * One failure of the batch itself (BUSY on BEGIN, a failed hook, COMMIT) fails every
 * transaction in it, up to MAX_BATCH of them.
 * A work must not wait for another transaction's outcome: a later one of the same batch
 * would wait for a COMMIT that waits for it. (With one connection, waiting for a later
 * transaction was a deadlock already.)
 */
export class GroupCommit {
  private readonly queue: Queued[] = [];
  private running = false;
  /** The fsync of the WAL in flight, and one to start after it (for commits it may not cover). */
  private syncing: Promise<void> | null = null;
  private nextSync: Promise<void> | null = null;
  /** A failed fsync of the WAL (or COMMIT on I/O): nothing is durable from then on. */
  private broken: unknown = null;

  constructor(
    private readonly db: Kysely<Database>,
    /** fsync of the database's `-wal` file (through a descriptor held open from the start: metadata-store.ts). */
    private readonly syncWal: () => Promise<void>,
    /** Told once, when the store breaks, with the cause. */
    private readonly onBroken: (error: unknown) => void = () => {},
  ) {}

  /** Why nothing can be promised durable any more (a restart is needed); null while all is well. */
  get failure(): unknown {
    return this.broken;
  }

  /** Resolves once no fsync is in flight (before the WAL's descriptor is closed). */
  async settle(): Promise<void> {
    while (this.syncing !== null || this.nextSync !== null) await (this.nextSync ?? this.syncing)?.catch(() => {});
  }

  private breakWith(error: unknown): void {
    if (this.broken !== null) return;
    this.broken = error;
    this.onBroken(error);
  }

  /** Runs `work` in the next batch; its result (or its own error) once that batch is durable. */
  run<T>(work: BatchWork<T>, options: { first?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        work: work as BatchWork<unknown>,
        first: options.first === true,
        settle: (outcome) => (outcome.ok ? resolve(outcome.value as T) : reject(outcome.error)),
      });
      if (!this.running) {
        this.running = true;
        void this.drain();
      }
    });
  }

  /** Runs batches while transactions wait; the first one at once. */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.nextBatchLength());
      await this.runBatch(batch);
      // One turn of the event loop: requests whose I/O completed meanwhile queue their
      // transactions for the next batch.
      if (this.queue.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.running = false;
  }

  /** Up to MAX_BATCH waiting transactions, ending before any other than the first that must run first. */
  private nextBatchLength(): number {
    const limit = Math.min(this.queue.length, MAX_BATCH);
    for (let i = 1; i < limit; i++) if (this.queue[i]!.first) return i;
    return limit;
  }

  /** Runs a batch up to its COMMIT; its callers hear once the WAL is fsynced (not awaited here). */
  private async runBatch(batch: Queued[]): Promise<void> {
    const outcomes: Outcome[] = [];
    let failure: { error: unknown } | null = this.broken === null ? null : { error: this.broken };
    if (failure === null) {
      try {
        await this.commitBatch(batch, outcomes);
      } catch (error) {
        failure = { error };
      }
    }
    const durable =
      failure === null
        ? this.durable().then(
            () => null,
            (error: unknown) => ({ error }),
          )
        : Promise.resolve(failure);
    void durable.then((failed) => {
      batch.forEach((item, i) => {
        const outcome = outcomes[i];
        // Nothing of the batch is durable: the works that had succeeded, and the ones not
        // reached (the batch failed under them), fail with the cause.
        item.settle(failed !== null && (outcome === undefined || outcome.ok) ? { ok: false, error: failed.error } : outcome!);
      });
    });
  }

  /**
   * BEGIN … COMMIT of the batch at synchronous = NORMAL; the connection is held from the
   * first pragma to the last, so no statement outside the batch commits without its fsync.
   */
  private async commitBatch(batch: Queued[], outcomes: Outcome[]): Promise<void> {
    await this.db.connection().execute(async (connection) => {
      await connection.executeQuery(SYNCHRONOUS_NORMAL);
      try {
        const trx = await connection.startTransaction().execute();
        let committing = false;
        try {
          // Under the write lock: every commit made before, by this process or another, is
          // durable before the first work reads.
          if (batch[0]!.first) await this.durable();
          const hooks = new PendingHooks();
          for (const item of batch) {
            const own = new PendingHooks();
            await trx.executeQuery(SAVEPOINT);
            try {
              const value = await item.work(trx, own);
              await trx.executeQuery(RELEASE);
              hooks.merge(own);
              outcomes.push({ ok: true, value });
            } catch (error) {
              outcomes.push({ ok: false, error });
              // Undoes this work alone. Some errors (SQLITE_FULL, SQLITE_IOERR) roll the whole
              // transaction back: then there is no savepoint left, this throws, and the batch fails.
              await trx.executeQuery(ROLLBACK_TO);
              await trx.executeQuery(RELEASE);
            }
          }
          await hooks.run();
          committing = true;
          await trx.commit().execute();
        } catch (error) {
          // After a failed COMMIT the transaction may be gone (rolled back, or committed):
          // the rollback then fails, and the COMMIT's error is the one that counts.
          if (!trx.isCommitted)
            await trx
              .rollback()
              .execute()
              .catch(() => {});
          if (committing && isIoFailure(error)) this.breakWith(error);
          throw error;
        }
      } finally {
        await connection.executeQuery(SYNCHRONOUS_FULL);
      }
    });
  }

  /**
   * Resolves once every COMMIT made before the call is durable: an fsync of the WAL that
   * starts after the call (one in flight may have started before the last COMMIT), shared
   * by every caller that waits meanwhile.
   */
  durable(): Promise<void> {
    if (this.broken !== null) return Promise.reject(this.broken);
    if (this.syncing === null) {
      this.syncing = this.syncWal().then(
        () => {
          this.syncing = null;
        },
        (error: unknown) => {
          this.syncing = null;
          this.breakWith(error);
          throw error;
        },
      );
      return this.syncing;
    }
    this.nextSync ??= this.syncing
      .catch(() => {})
      .then(() => {
        this.nextSync = null;
        return this.durable();
      });
    return this.nextSync;
  }
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * An error of SQLite's I/O (SQLITE_IOERR and its extended codes, SQLITE_FULL): from COMMIT,
 * the rows may have landed while what makes them durable failed.
 */
export function isIoFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_FULL' || code === 'SQLITE_IOERR' || code.startsWith('SQLITE_IOERR_'));
}
