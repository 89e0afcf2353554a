import { ConfigError } from '../config/config.js';
import { InputError } from '../services/accounts-service.js';
import { UsageError } from './args.js';
import { ACCOUNTS_USAGE, accountsCommand } from './commands/accounts.js';
import { AUDIT_USAGE, auditCommand } from './commands/audit.js';
import { BACKUP_USAGE, RESTORE_USAGE, backupCommand, restoreCommand } from './commands/backup.js';
import { GC_USAGE, STATS_USAGE, gcCommand, statsCommand } from './commands/housekeeping.js';
import { MIGRATE_USAGE, migrateCommand } from './commands/migrate.js';
import { BLACKLIST_USAGE, FILES_USAGE, blacklistCommand, filesCommand } from './commands/moderation.js';
import { RESERVATIONS_USAGE, reservationsCommand } from './commands/reservations.js';
import { SERVE_USAGE, serveCommand } from './commands/serve.js';

const USAGE = `usage:
  ${SERVE_USAGE}
  ${ACCOUNTS_USAGE.split('\n').join('\n  ')}
  ${FILES_USAGE.split('\n').join('\n  ')}
  ${BLACKLIST_USAGE.split('\n').join('\n  ')}
  ${AUDIT_USAGE}
  ${GC_USAGE}
  ${STATS_USAGE}
  ${RESERVATIONS_USAGE}
  ${BACKUP_USAGE}
  ${RESTORE_USAGE}
  ${MIGRATE_USAGE.split('\n').join('\n  ')}

Every command takes --data DIR (or FILEHAVEN_DATA) and the other settings of the README.`;

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  serve: serveCommand,
  accounts: accountsCommand,
  files: filesCommand,
  blacklist: blacklistCommand,
  audit: auditCommand,
  gc: gcCommand,
  stats: statsCommand,
  reservations: reservationsCommand,
  backup: backupCommand,
  restore: restoreCommand,
  migrate: migrateCommand,
};

/** Runs the CLI; returns the exit code (0 ok, 1 failure, 2 usage). */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const run = COMMANDS[command];
  if (!run) {
    console.error(`filehaven: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  try {
    await run(args);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`filehaven ${command}: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof ConfigError || error instanceof InputError) {
      console.error(`filehaven ${command}: ${error.message}`);
      return 1;
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      console.error(`filehaven ${command}: cannot listen: ${(error as Error).message}`);
      return 1;
    }
    console.error(`filehaven ${command}: ${(error as Error).message}`);
    if (process.env.FILEHAVEN_DEBUG) console.error(error);
    return 1;
  }
}
