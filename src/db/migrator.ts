import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as initial from './migrations/0001-initial.js';
import * as operatorControls from './migrations/0002-operator-controls.js';
import * as sessions from './migrations/0003-sessions.js';
import * as serverSettings from './migrations/0004-server-settings.js';
import * as signInAddresses from './migrations/0005-sign-in-addresses.js';

/** Migrations listed explicitly, in order, never renamed (STYLE.md rule 7). */
const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-operator-controls': operatorControls,
  '0003-sessions': sessions,
  '0004-server-settings': serverSettings,
  '0005-sign-in-addresses': signInAddresses,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Brings the schema to the latest version; throws with the failing migration's name. */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider, migrationTableName: 'filehaven_migrations', migrationLockTableName: 'filehaven_migrations_lock' });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`);
  }
}
