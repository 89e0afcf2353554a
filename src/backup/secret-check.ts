import type { DatabaseSnapshot } from '../db/sqlite-snapshot.js';
import { InputError } from '../domain/errors.js';
import { constantTimeEqual, SECRET_FINGERPRINT_SETTING, ServerSecrets } from '../security/secrets.js';

/**
 * Refuses a secret that is not the one the database was set up with (its stored
 * fingerprint): a backup or restore with it would hold API keys nobody can open, and the
 * server would refuse to start on it. A database from before fingerprints passes.
 */
export async function checkSecret(snapshot: DatabaseSnapshot, secret: string, where: string): Promise<void> {
  const stored = await snapshot.setting(SECRET_FINGERPRINT_SETTING);
  if (stored !== null && !constantTimeEqual(new ServerSecrets(secret).fingerprint(), stored)) {
    throw new InputError(`the secret of ${where} is not the one this database was set up with; its API keys and direct links depend on it`);
  }
}
