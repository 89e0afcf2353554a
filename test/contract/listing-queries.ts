import {
  type CompiledQuery,
  type Dialect,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { Database } from '../../src/db/database.js';
import type { Engine } from '../../src/db/dialect.js';
import { filesRepository } from '../../src/db/repositories/files-repository.js';
import { foldersRepository } from '../../src/db/repositories/folders-repository.js';
import { FileStatus } from '../../src/domain/types.js';

/** One keyset listing of the repositories, as the SQL it sends. */
export interface ListingQuery {
  /** Which listing and filters, for failure messages. */
  name: string;
  /** The compiled statement and its parameters, ready for EXPLAIN. */
  query: CompiledQuery;
}

/** An engine's compiler over a driver that runs nothing: the repositories' SQL without a database. */
function compileOnly(engine: Engine): Dialect {
  const sqlite = engine === 'sqlite';
  return {
    createAdapter: () => (sqlite ? new SqliteAdapter() : new PostgresAdapter()),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => (sqlite ? new SqliteIntrospector(db) : new PostgresIntrospector(db)),
    createQueryCompiler: () => (sqlite ? new SqliteQueryCompiler() : new PostgresQueryCompiler()),
  };
}

/**
 * The statement of every listing with a cursor (the filters GET /files, GET /folders and a
 * folder's page use), written by the real repository code, so a plan check sees exactly
 * what a server runs.
 */
export async function listingQueries(engine: Engine): Promise<ListingQuery[]> {
  let last: CompiledQuery | undefined;
  const db = new Kysely<Database>({
    dialect: compileOnly(engine),
    log: (event) => {
      last = event.query;
    },
  });
  const files = filesRepository(db, engine);
  const folders = foldersRepository(db);
  const before = { createdAt: 1_800_000_000_000, id: 'CURSOR0001' };
  const states = [FileStatus.Active, FileStatus.Blocked];
  const listings: Record<string, () => Promise<unknown>> = {
    'files of an owner': () => files.list({ ownerId: 1, states, before, limit: 51 }),
    'files of an owner, root': () => files.list({ ownerId: 1, states, folderId: null, before, limit: 51 }),
    'files of an owner, one folder': () => files.list({ ownerId: 1, states, folderId: 'FOLDER0001', before, limit: 51 }),
    'files of a folder (folder page)': () => files.list({ folderId: 'FOLDER0001', states: [FileStatus.Active], before, limit: 51 }),
    'folders of an owner': () => folders.list({ ownerId: 1, before, limit: 51 }),
    'folders of an owner, top level': () => folders.list({ ownerId: 1, parentId: null, before, limit: 51 }),
    'folders of an owner, one parent': () => folders.list({ ownerId: 1, parentId: 'FOLDER0001', before, limit: 51 }),
  };
  const queries: ListingQuery[] = [];
  for (const [name, run] of Object.entries(listings)) {
    last = undefined;
    await run();
    if (!last) throw new Error(`${name}: no statement was run`);
    queries.push({ name, query: last });
  }
  await db.destroy();
  return queries;
}
