import { userInfo } from 'node:os';
import { openSqlite } from '../db/dialect.js';
import { openMetadataStore } from '../db/metadata-store.js';
import { systemClock } from '../domain/ids.js';
import { AuditService } from '../services/audit-service.js';

/** Who runs this CLI, as the audit log names it: `cli:<os user name>`. */
export function cliActor(): string {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    // A uid without a passwd entry (some containers): fall back to the environment.
  }
  user ||= process.env.USER || process.env.LOGNAME || (typeof process.getuid === 'function' ? `uid${process.getuid()}` : 'unknown');
  return `cli:${user}`;
}

/**
 * Records an action in the audit log of a data folder's database without opening its
 * services: backup and restore must never create a secret (or anything else) there.
 */
export async function auditFolder(dataDir: string, action: string, object: string, details = ''): Promise<void> {
  const store = await openMetadataStore(openSqlite(dataDir));
  try {
    await new AuditService({ store, clock: systemClock }).record({ actor: cliActor(), action, object, details });
  } finally {
    await store.close();
  }
}
