import { ConfigError } from '../config/config.js';
import { InputError } from '../services/accounts-service.js';
import { RunningElsewhereError } from '../services/run-alone.js';
import { UsageError } from './args.js';
import { CommandExit } from './client/command-exit.js';

type Command = (args: string[]) => Promise<void>;

/*
 * Each command's module is loaded only when that command runs (issue 9): the operator
 * commands no longer load the HTTP server (Fastify and every route; `filehaven stats`
 * starts in two thirds of the time and 18 MB less), and `serve` skips backup, restore and
 * migrate.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  // For users of a filehaven site: they talk to a server over its API (src/client).
  login: async () => (await import('./commands/login.js')).loginCommand,
  logout: async () => (await import('./commands/login.js')).logoutCommand,
  upload: async () => (await import('./commands/upload.js')).uploadCommand,
  download: async () => (await import('./commands/download.js')).downloadCommand,
  ls: async () => (await import('./commands/my-files.js')).lsCommand,
  info: async () => (await import('./commands/my-files.js')).infoCommand,
  link: async () => (await import('./commands/my-files.js')).linkCommand,
  cp: async () => (await import('./commands/my-files.js')).cpCommand,
  mv: async () => (await import('./commands/my-files.js')).mvCommand,
  mkdir: async () => (await import('./commands/my-files.js')).mkdirCommand,
  rm: async () => (await import('./commands/my-files.js')).rmCommand,
  account: async () => (await import('./commands/my-account.js')).accountCommand,
  // For operators of this server: they work on its data folder and storage directly.
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
  const [login, upload, download, myFiles, myAccount, serve, accounts, moderation, audit, housekeeping, reservations, backup, migrate] = await Promise.all([
    import('./commands/login.js'),
    import('./commands/upload.js'),
    import('./commands/download.js'),
    import('./commands/my-files.js'),
    import('./commands/my-account.js'),
    import('./commands/serve.js'),
    import('./commands/accounts.js'),
    import('./commands/moderation.js'),
    import('./commands/audit.js'),
    import('./commands/housekeeping.js'),
    import('./commands/reservations.js'),
    import('./commands/backup.js'),
    import('./commands/migrate.js'),
  ]);
  const lines = (text: string) => text.split('\n').join('\n  ');
  return `usage:

For users of a filehaven site (talk to a server over its API; server and key from
filehaven login, or FILEHAVEN_SERVER and FILEHAVEN_KEY; exit codes 0 done, 1 failed,
2 usage, 3 not signed in or key refused, 130 interrupted):
  ${lines(login.LOGIN_USAGE)}
  ${upload.UPLOAD_USAGE}
  ${download.DOWNLOAD_USAGE}
  ${lines(myFiles.MY_FILES_USAGE)}
  ${myAccount.MY_ACCOUNT_USAGE}

For operators of this server (work on its data folder and storage, not over HTTP):
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

Every operator command takes --data DIR (or FILEHAVEN_DATA) and the other settings of the README.`;
}

/** Runs the CLI; returns the exit code (0 ok, 1 failure, 2 usage; the user commands also 3 and 130, command-exit.ts). */
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
    // A user command has printed its failure (and its --json document) already.
    if (error instanceof CommandExit) return error.exitCode;
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
