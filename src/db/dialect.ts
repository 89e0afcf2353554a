import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  sql,
} from 'kysely';
import type { ClientConfig, Pool, PoolClient } from 'pg';
import { preparedStatementName } from './compiled-query.js';
import type { Database } from './database.js';
import { withStatementCache } from './sqlite-statement-cache.js';

/** The SQLite database's file name inside the data folder (its `-wal` and `-shm` beside it). */
export const SQLITE_FILE = 'filehaven.db';

/** Which engine a database runs on: the repositories lock per engine (repositories/locks-repository.ts). */
export type Engine = 'sqlite' | 'postgres';

/** A database pool's connections at one moment (pg's Pool: totalCount, idleCount, waitingCount). */
export interface PoolConnections {
  /** Connections open, idle or in use. */
  total: number;
  /** Open connections no query holds. */
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

/** An opened database and its engine. */
export interface OpenedDatabase {
  db: Kysely<Database>;
  engine: Engine;
  /** The PostgreSQL schema the tables live in (null on SQLite). */
  schema: string | null;
  /** The pool's connections now (metrics); null on SQLite, which has one connection and no pool. */
  connections(): PoolConnections | null;
}

/**
 * SQLite transactions begin IMMEDIATE: the database's write lock is taken by BEGIN, before
 * the first read, so a transaction that reads and then writes (check a folder is empty,
 * then remove it) holds the lock for all of it, also against another process (the CLI
 * beside the server), which waits on busy_timeout instead of failing with SQLITE_BUSY.
 * That lock is what every lock of repositories/locks-repository.ts stands for on SQLite.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/**
 * Kysely runs SQLite migrations outside a transaction, under no lock ("SQLite only has one
 * connection"): true of one process, not of two servers or a server and the CLI starting
 * together on one data folder, which then both ran a migration (issue 10: `table
 * "server_settings" already exists`). SQLite's DDL is transactional: with this, the
 * migrator runs its listing and every pending migration in one BEGIN IMMEDIATE
 * transaction, the others wait for it (busy_timeout) and then find nothing to do.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly driverConfig: SqliteDialectConfig) {
    super(driverConfig);
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.driverConfig);
  }
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** The one place that knows which SQL engine is underneath (STYLE.md: Kysely). */
export function openSqlite(dataDir: string): OpenedDatabase {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, SQLITE_FILE);
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({
      database: async () => {
        createOwnerOnly(file);
        const db = new SQLite(file);
        // WAL lets readers run while one writer commits; busy_timeout makes the CLI and
        // the server wait for each other instead of failing with SQLITE_BUSY.
        db.pragma('journal_mode = WAL');
        db.pragma('busy_timeout = 10000');
        db.pragma('synchronous = FULL');
        db.pragma('foreign_keys = ON');
        // Statistics for the planner (issue 28): without them SQLite may pick an index on a
        // column shared by millions of rows over the one that narrows to a folder. At open,
        // the documented recipe for long-lived connections: a bounded sample of each table
        // that needs it (analysis_limit rows an index), milliseconds even at 10 M rows.
        // gc runs `PRAGMA optimize` again (housekeeping.refreshStatistics).
        db.pragma('analysis_limit = 1000');
        db.pragma('optimize = 0x10002');
        return withStatementCache(db);
      },
    }),
  });
  return { db, engine: 'sqlite', schema: null, connections: () => null };
}

/**
 * The `-wal` file group commit fsyncs: beside the database's file as SQLite resolved it
 * (`PRAGMA database_list`; a symlinked database has its WAL beside the target, not the
 * link). Throws unless the database is in WAL mode, where group commit's durability rests.
 */
export async function sqliteWalFile(db: Kysely<Database>): Promise<string> {
  const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
  if (mode.rows[0]?.journal_mode !== 'wal') throw new Error(`SQLite is not in WAL mode (journal_mode = ${mode.rows[0]?.journal_mode})`);
  const list = await sql<{ name: string; file: string }>`pragma database_list`.execute(db);
  const main = list.rows.find((row) => row.name === 'main');
  if (!main?.file) throw new Error('SQLite names no file for the main database');
  return `${main.file}-wal`;
}

/**
 * Creates the database file empty (SQLite takes an empty file for an empty database) with
 * mode 0600 when it does not exist, instead of SQLite's 0644: it holds the accounts, and
 * SQLite gives its `-wal` and `-shm` files the database file's mode (issue 14). The umask
 * can only narrow the mode. An existing file keeps the mode the operator gave it.
 */
function createOwnerOnly(file: string): void {
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** What PostgreSQL needs: the URL, the schema holding the tables, the pool size. */
export interface PostgresOptions {
  /** `postgres://USER[:PASSWORD]@HOST:PORT/DB` */
  url: string;
  /** Schema of the tables (created when missing), so one database can hold several installations or test runs. */
  schema: string;
  /** Most connections the pool opens. */
  poolSize: number;
  /**
   * Longest a query waits for a connection when every one is in use, in ms; past it the
   * query fails with DatabaseBusyError. POOL_WAIT_MS unless given (the server's
   * --database-pool-wait).
   */
  poolWaitMs?: number;
}

/**
 * A query waited `waitMs` for one of the pool's connections and none came free: the server
 * has more work than its connections (--database-pool-size) carry just now. Nothing was
 * run; the same request may go through a moment later (the HTTP layer answers 503 with
 * Retry-After). pg-pool's own timeout is a plain Error, told apart from a database that
 * does not answer only by its text: so the wait is bounded here instead (openPostgres).
 */
export class DatabaseBusyError extends Error {
  override name = 'DatabaseBusyError';
  constructor(
    /** How long the query waited. */
    readonly waitMs: number,
    /** The pool when it gave up. */
    readonly connections: PoolConnections,
  ) {
    super(`every database connection stayed in use for ${waitMs} ms (${connections.total} open, ${connections.waiting} queries waiting)`);
  }
}

/** A query's wait for a busy pool's connection unless PostgresOptions says otherwise. */
export const POOL_WAIT_MS = 10_000;

/** How long opening one connection to PostgreSQL may take: a server that does not answer fails a start in seconds, not a hang. */
const CONNECT_TIMEOUT_MS = 10_000;

/** A schema name that needs no quoting: what `--database-schema` accepts. */
export const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

export function openPostgres(options: PostgresOptions): OpenedDatabase {
  if (!SCHEMA_PATTERN.test(options.schema)) throw new Error(`not a schema name: ${options.schema}`);
  // pg is loaded with the first connection: a server on SQLite never pays its ~5 MB.
  let opened: Pool | null = null;
  const pool = async () => {
    const { default: pg } = await import('pg');
    // The connect timeout is the client's alone: given to the pool, it would also bound a
    // query's wait in the queue for a busy connection, and fail it with the same plain
    // Error as an unreachable server (a 500). That wait is bounded in checkOut instead.
    class BoundedConnectClient extends pg.Client {
      constructor(config?: ClientConfig) {
        super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
      }
    }
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize, Client: BoundedConnectClient });
    // A connection the server drops (a restart, a failover, a network cut) must not crash
    // the process: pg emits 'error' on the pool for an idle client and on the client itself
    // for one that is checked out between two queries, where nothing else listens. The pool
    // replaces the connection, and the query that next uses it reports the outage to its
    // request (500 errorInternal); test/http/backend-outage.test.ts cuts the link.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    opened = pool;
    return namingPreparedStatements(pool, (pool) => checkOut(pool, options.poolSize, options.poolWaitMs ?? POOL_WAIT_MS));
  };
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool,
      onCreateConnection: async (connection) => {
        await connection.executeQuery(CompiledQuery.raw(`set search_path to "${options.schema}"`));
      },
    }),
  });
  // Before the first query there is no pool yet: no connections.
  const connections = () => (opened ? { total: opened.totalCount, idle: opened.idleCount, waiting: opened.waitingCount } : { total: 0, idle: 0, waiting: 0 });
  return { db, engine: 'postgres', schema: options.schema, connections };
}

/**
 * The pool as Kysely sees it, with the compiled queries of compiled-query.ts run as named
 * prepared statements: each connection parses and plans such a query once, not on every
 * call (issue 28: PostgreSQL's CPU per GET /account fell by a third). Every other query
 * runs as before. One wrapper per pg client, as Kysely keeps its connections by client.
 */
function namingPreparedStatements(pool: Pool, connect: (pool: Pool) => Promise<PoolClient>): PostgresPool {
  const wrappers = new WeakMap<PoolClient, PostgresPoolClient>();
  const wrap = (client: PoolClient): PostgresPoolClient => {
    // A statement PostgreSQL refuses to run again ("cached plan must not change result
    // type": another server's migration added a column to a `select *`) is left behind
    // and the text prepared anew under the next name; the one call is retried.
    const renamed = new Map<string, number>();
    const run = async (name: string, text: string, values: unknown[]) => {
      const generation = renamed.get(text);
      const config = { name: generation === undefined ? name : `${name}_${generation}`, text, values };
      try {
        return await client.query(config);
      } catch (error) {
        if ((error as { code?: string }).code !== STALE_PLAN) throw error;
        renamed.set(text, (generation ?? 0) + 1);
        return await client.query({ ...config, name: `${name}_${(generation ?? 0) + 1}` });
      }
    };
    return {
      query: ((query: string | object, values?: unknown[]) => {
        const name = typeof query === 'string' ? preparedStatementName(query) : undefined;
        if (name === undefined) return client.query(query as never, values as never);
        return run(name, query as string, values ?? []);
      }) as unknown as PostgresPoolClient['query'],
      release: () => client.release(),
    };
  };
  return {
    connect: async () => {
      const client = await connect(pool);
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = wrap(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

/**
 * A connection from the pool. pg-pool queues the query (first come, first served) when
 * every connection is open or one is idle (handed out in the queue's order); the wait there
 * is bounded by `waitMs` (DatabaseBusyError), and a connection that comes after its query
 * gave up goes straight back to the next in line. Else the pool opens a connection for
 * this query alone, bounded by CONNECT_TIMEOUT_MS, whose failure is the database's (an
 * outage), not a busy server's.
 */
function checkOut(pool: Pool, poolSize: number, waitMs: number): Promise<PoolClient> {
  const connections = (): PoolConnections => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  const queued = pool.idleCount > 0 || pool.totalCount >= poolSize;
  if (!queued) return pool.connect();
  return new Promise((resolve, reject) => {
    let gaveUp = false;
    const timer = setTimeout(() => {
      gaveUp = true;
      reject(new DatabaseBusyError(waitMs, connections()));
    }, waitMs);
    pool.connect().then(
      (client) => {
        clearTimeout(timer);
        if (gaveUp) client.release();
        else resolve(client);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!gaveUp) reject(error);
      },
    );
  });
}

/** SQLSTATE feature_not_supported: what a prepared statement whose result columns changed fails with. */
const STALE_PLAN = '0A000';

/** Whether a Kysely instance talks to PostgreSQL (migrations need serial ids there). */
export function isPostgres<DB>(db: Kysely<DB>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
