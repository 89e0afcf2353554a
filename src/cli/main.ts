import { ConfigError } from '../config/config.js';
import { InputError } from '../domain/errors.js';
import { RunningElsewhereError } from '../services/run-alone.js';
import { UsageError } from './args.js';
import { CommandExit } from './client/command-exit.js';
import { helpText, isCommand, overview, settingsHelp, subcommandsOf } from './help.js';
import { filehavenVersion } from './version.js';

type Command = (args: string[]) => Promise<void>;

/*
 * Each command's module is loaded only when that command runs (issue 9): the operator
 * commands no longer load the HTTP server (Fastify and every route; `filehaven stats`
 * starts in two thirds of the time and 18 MB less), and `serve` skips backup, restore and
 * migrate.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  // For users of a filehaven site: they talk to a server over its API (src/client).
  login: async () => (await import('./client/login.js')).loginCommand,
  logout: async () => (await import('./client/login.js')).logoutCommand,
  upload: async () => (await import('./client/upload.js')).uploadCommand,
  download: async () => (await import('./client/download.js')).downloadCommand,
  ls: async () => (await import('./client/my-files.js')).lsCommand,
  info: async () => (await import('./client/my-files.js')).infoCommand,
  link: async () => (await import('./client/my-files.js')).linkCommand,
  cp: async () => (await import('./client/my-files.js')).cpCommand,
  mv: async () => (await import('./client/my-files.js')).mvCommand,
  mkdir: async () => (await import('./client/my-files.js')).mkdirCommand,
  rm: async () => (await import('./client/my-files.js')).rmCommand,
  account: async () => (await import('./client/my-account.js')).accountCommand,
  expire: async () => (await import('./client/sharing.js')).expireCommand,
  share: async () => (await import('./client/sharing.js')).shareCommand,
  shares: async () => (await import('./client/sharing.js')).sharesCommand,
  unshare: async () => (await import('./client/sharing.js')).unshareCommand,
  request: async () => (await import('./client/sharing.js')).requestCommand,
  requests: async () => (await import('./client/sharing.js')).requestsCommand,
  'close-request': async () => (await import('./client/sharing.js')).closeRequestCommand,
  // For operators of this server: they work on its data folder and storage directly.
  serve: async () => (await import('./operator/serve.js')).serveCommand,
  init: async () => (await import('./operator/init.js')).initCommand,
  accounts: async () => (await import('./operator/accounts.js')).accountsCommand,
  files: async () => (await import('./operator/moderation.js')).filesCommand,
  blacklist: async () => (await import('./operator/moderation.js')).blacklistCommand,
  audit: async () => (await import('./operator/audit.js')).auditCommand,
  gc: async () => (await import('./operator/housekeeping.js')).gcCommand,
  stats: async () => (await import('./operator/housekeeping.js')).statsCommand,
  reservations: async () => (await import('./operator/reservations.js')).reservationsCommand,
  backup: async () => (await import('./operator/backup.js')).backupCommand,
  restore: async () => (await import('./operator/backup.js')).restoreCommand,
  migrate: async () => (await import('./operator/migrate.js')).migrateCommand,
};

/** `filehaven help [CMD [SUB]]`, `help settings`; exit code 0, or 2 for an unknown command. */
function help(args: string[]): number {
  const [command, sub] = args;
  if (command === undefined) {
    console.log(overview());
    return 0;
  }
  if (command === 'settings') {
    console.log(settingsHelp());
    return 0;
  }
  if (!isCommand(command)) return unknownCommand(command, 'help');
  const subs = subcommandsOf(command);
  if (sub !== undefined && (subs === null || !subs.includes(sub))) {
    console.error(`filehaven help: ${subs === null ? `${command} has no subcommands` : `unknown ${command} command "${sub}"`}`);
    console.error(`Run 'filehaven help ${command}' for usage.`);
    return 2;
  }
  console.log(helpText(command, sub));
  return 0;
}

function unknownCommand(command: string, where = ''): number {
  console.error(`filehaven${where ? ` ${where}` : ''}: unknown command "${command}"`);
  console.error("Run 'filehaven help' for the list of commands.");
  return 2;
}

/** Whether the arguments ask for help (`--help` or `-h` before any `--`). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** Runs the CLI; returns the exit code (0 ok, 1 failure, 2 usage; the user commands also 3 and 130, command-exit.ts). */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined) {
    console.error(overview());
    return 2;
  }
  if (command === 'help' || command === '--help' || command === '-h') return help(args);
  if (command === '--version' || command === '-V' || command === 'version') {
    console.log(`filehaven ${filehavenVersion()}`);
    return 0;
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!load || !isCommand(command)) return unknownCommand(command);
  // The subcommand a group was given, for help and for the hint after a usage error.
  const sub = subcommandsOf(command)?.includes(args[0] ?? '') ? args[0] : undefined;
  if (asksForHelp(args)) {
    console.log(helpText(command, sub));
    return 0;
  }
  try {
    const run = await load();
    await run(args);
    return 0;
  } catch (error) {
    // A user command has printed its failure (and its --json document) already.
    if (error instanceof CommandExit) return error.exitCode;
    if (error instanceof UsageError) {
      // The mistake and where to read more, nothing else: a page of usage would bury it.
      console.error(`filehaven ${command}: ${error.message}`);
      console.error(`Run 'filehaven help ${sub ? `${command} ${sub}` : command}' for usage.`);
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
