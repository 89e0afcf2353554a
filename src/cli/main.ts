import { ConfigError } from '../config/config.js';
import { InputError } from '../services/accounts-service.js';
import { RunningElsewhereError } from '../services/run-alone.js';
import { UsageError } from './args.js';

type Command = (args: string[]) => Promise<void>;

/*
 * Each command's module is loaded only when that command runs (issue 9): the operator
 * commands no longer load the HTTP server (Fastify and every route; `filehaven stats`
 * starts in two thirds of the time and 18 MB less), and `serve` skips backup, restore and
 * migrate.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./commands/serve.js')).serveCommand,
  accounts: async () => (await import('./commands/accounts.js')).accountsCommand,
  files: async () => (await import('./commands/moderation.js')).filesCommand,
  blacklist: async () => (await import('./commands/moderation.js')).blacklistCommand,
  audit: async () => (await import('./commands/audit.js')).auditCommand,
  gc: async () => (await import('./commands/housekeeping.js')).gcCommand,
  stats: async () => (await import('./commands/housekeeping.js')).statsCommand,
  reservations: async () => (await import('./commands/reservations.js')).reservationsCommand,
  backup: async () => (await import('./commands/backup.js')).backupCommand,
  restore: async () => (await import('./commands/backup.js')).restoreCommand,
  migrate: async () => (await import('./commands/migrate.js')).migrateCommand,
};

/** The help text. It loads every command module for its usage line: only help and mistakes need it. */
async function usage(): Promise<string> {
  const [serve, accounts, moderation, audit, housekeeping, reservations, backup, migrate] = await Promise.all([
    import('./commands/serve.js'),
    import('./commands/accounts.js'),
    import('./commands/moderation.js'),
    import('./commands/audit.js'),
    import('./commands/housekeeping.js'),
    import('./commands/reservations.js'),
    import('./commands/backup.js'),
    import('./commands/migrate.js'),
  ]);
  return `usage:
  ${serve.SERVE_USAGE}
  ${accounts.ACCOUNTS_USAGE.split('\n').join('\n  ')}
  ${moderation.FILES_USAGE.split('\n').join('\n  ')}
  ${moderation.BLACKLIST_USAGE.split('\n').join('\n  ')}
  ${audit.AUDIT_USAGE}
  ${housekeeping.GC_USAGE}
  ${housekeeping.STATS_USAGE}
  ${reservations.RESERVATIONS_USAGE}
  ${backup.BACKUP_USAGE}
  ${backup.RESTORE_USAGE}
  ${migrate.MIGRATE_USAGE.split('\n').join('\n  ')}

Every command takes --data DIR (or FILEHAVEN_DATA) and the other settings of the README.`;
}

/** Runs the CLI; returns the exit code (0 ok, 1 failure, 2 usage). */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    console.log(await usage());
    return command ? 0 : 2;
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!load) {
    console.error(`filehaven: unknown command "${command}"\n\n${await usage()}`);
    return 2;
  }
  try {
    const run = await load();
    await run(args);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`filehaven ${command}: ${error.message}\n\n${await usage()}`);
      return 2;
    }
    if (error instanceof ConfigError || error instanceof InputError || error instanceof RunningElsewhereError) {
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
