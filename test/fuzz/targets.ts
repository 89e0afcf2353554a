import path from 'node:path';
import SQLite from 'better-sqlite3';
import { listFiles } from '../helpers/raw-upload.js';
import { type ProcessExit, type ServerProcess, spawnServerProcess, THIS_ROOT } from './fuzz-server-process.js';

/**
 * What the fuzzer runs against: a server in its own process, and a read-only view of its
 * storage. One factory per backend; the embedded default (SQLite + local blobs) is the
 * only one today. A PostgreSQL or S3 factory starts the same `filehaven serve` with its
 * flags and answers the same StorageProbe questions from its database and bucket.
 */

/** The limits a fuzz server runs with: the defaults would answer 429 to a fuzz run. */
export interface FuzzLimits {
  /** API requests per minute per address; 0 = unlimited. */
  apiRatePerIp: number;
  /** API requests per minute per key; 0 = unlimited. */
  apiRatePerKey: number;
  /** Failed sign-ins per minute per address and per login. */
  loginAttempts: number;
}

export const NO_LIMITS: FuzzLimits = { apiRatePerIp: 0, apiRatePerKey: 0, loginAttempts: 1_000_000 };

/** Largest accepted file of a fuzz server: small, so the fuzzer reaches 413 cheaply. */
export const FUZZ_MAX_FILE_SIZE = 256 * 1024;

/** Read-only questions about what the server has stored. */
export interface StorageProbe {
  /** Temp files of uploads in progress (or left behind). */
  stagedUploads(): Promise<string[]>;
  /** Every file row, deleted ones included: id → SHA-256 of its content. */
  fileRows(): Promise<Map<string, string>>;
  /** Digests of stored blob bytes, of blob rows, and of live (active or blocked) file rows. */
  blobs(): Promise<{ stored: string[]; rows: string[]; live: string[] }>;
  close(): Promise<void>;
}

export interface FuzzTarget {
  /** For reports: the backend. */
  readonly name: string;
  readonly host: string;
  readonly port: number;
  /** {base_url} */
  readonly url: string;
  /** Null while the server process runs; how it ended otherwise. */
  exit(): ProcessExit | null;
  /** Starts the server again on the same storage (after a crash). */
  restart(): Promise<void>;
  /** Runs the operator CLI (`filehaven <args>`) on the same storage. */
  cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  readonly storage: StorageProbe;
  stop(): Promise<void>;
}

export type TargetFactory = (limits: FuzzLimits) => Promise<FuzzTarget>;

/**
 * The embedded default as operators run it: `node bin/filehaven.js serve` on a fresh
 * data folder. A separate process (rather than startTestServer in the test runner) is
 * what makes a crash visible: an uncaught exception in an in-process server would be
 * caught by node:test's own uncaughtException handler, reported against whichever test
 * happens to run, and leave the server half-alive; here it ends the process, as it
 * would in production, and the fuzzer sees the exit code and the stack on stderr.
 *
 * `root` is the checkout to run (this one by default; an older commit unpacked with
 * `git archive` tells whether a failure is a regression).
 */
export function embeddedTargetOf(root: string): TargetFactory {
  return async (limits) => {
    const server: ServerProcess = await spawnServerProcess(
      [
        '--api-rate-per-ip',
        String(limits.apiRatePerIp),
        '--api-rate-per-key',
        String(limits.apiRatePerKey),
        '--login-attempts',
        String(limits.loginAttempts),
        '--max-file-size',
        String(FUZZ_MAX_FILE_SIZE),
        // gc would remove temp files and blobs under the fuzzer's feet; the checks count them.
        '--gc-interval',
        '0',
        '--signup',
        'open',
      ],
      {},
      root,
    );
    const storage = sqliteProbe(server.dataDir);
    return {
      name: `embedded default (SQLite + local blobs)${root === THIS_ROOT ? '' : ` of ${root}`}`,
      get host() {
        return server.host;
      },
      get port() {
        return server.port;
      },
      get url() {
        return server.url;
      },
      exit: () => server.exit,
      restart: () => server.restart(),
      cli: (args) => server.cli(args),
      storage,
      async stop() {
        await storage.close();
        await server.stop();
      },
    };
  };
}

/** The embedded default of this checkout. */
export const embeddedTarget: TargetFactory = embeddedTargetOf(THIS_ROOT);

/** The data folder and SQLite file of the embedded default, read directly. */
function sqliteProbe(dataDir: string): StorageProbe {
  let db: SQLite.Database | undefined;
  const open = () => (db ??= new SQLite(path.join(dataDir, 'filehaven.db'), { readonly: true, fileMustExist: true }));
  return {
    async stagedUploads() {
      return (await listFiles(path.join(dataDir, 'tmp'))).filter((name) => name.endsWith('.part'));
    },
    async fileRows() {
      const rows = open().prepare('SELECT id, sha256 FROM files').all() as { id: string; sha256: string }[];
      return new Map(rows.map((row) => [row.id, row.sha256]));
    },
    async blobs() {
      const stored = (await listFiles(path.join(dataDir, 'blobs'))).map((name) => path.basename(name)).sort();
      const rows = (open().prepare('SELECT sha256 FROM blobs ORDER BY sha256').all() as { sha256: string }[]).map((row) => row.sha256);
      const live = (open().prepare("SELECT DISTINCT sha256 FROM files WHERE status IN ('A', 'B') ORDER BY sha256").all() as { sha256: string }[]).map(
        (row) => row.sha256,
      );
      return { stored, rows, live };
    },
    async close() {
      db?.close();
      db = undefined;
    },
  };
}
