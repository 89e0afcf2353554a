import type { ParseArgsConfig } from 'node:util';
import { SETTINGS } from '../config/config.js';
import { type NumberRange, RANGES } from './flags.js';

/*
 * The one catalogue of commands and flags (issue 12): `filehaven help`, `help CMD`,
 * `CMD --help` and `CMD SUB --help` print it, and the commands parse their flags from it
 * (optionsFor), so a flag cannot be accepted without being explained, nor the reverse.
 * Loading it loads no command module.
 */

/** One flag of a command. */
export interface FlagHelp {
  /** The flag without its dashes (`login` for `--login`). */
  name: string;
  /** What its value is called (`L`, `BYTES`); none for an on/off flag. */
  value?: string;
  /** A one-letter alias (`o` for `-o`). */
  short?: string;
  /** One line: what it does. */
  text: string;
  /** For a flag that takes a number: the values it takes (flags.ts parses them against it). */
  range?: NumberRange;
}

/** A command (or a subcommand of a group). */
export interface CommandHelp {
  /** What follows the command's name on the usage line. */
  usage: string;
  /** One line: what it does. */
  summary: string;
  /** Its own flags; the common ones of its audience are added when printed. */
  flags: FlagHelp[];
}

/** A command with subcommands (`accounts create`, `files list`). */
export interface GroupHelp {
  summary: string;
  subcommands: Record<string, CommandHelp>;
}

/** Who a command is for: users talk to a site over HTTP, operators work on its storage. */
export type Audience = 'user' | 'operator';

type Entry = { audience: Audience } & (CommandHelp | GroupHelp);

const json: FlagHelp = { name: 'json', text: 'print one JSON document (raw numbers, for scripts) instead of the table or text' };
const login: FlagHelp = { name: 'login', value: 'L', text: "the account's login" };
const passwordStdin: FlagHelp = {
  name: 'password-stdin',
  text: 'read the password from the first line of standard input (keeps it out of ps and the shell history)',
};
const reason: FlagHelp = { name: 'reason', value: 'TEXT', text: 'why, kept with the entry (one line, at most 255 characters)' };
const limit = (range: NumberRange & { fallback: number }): FlagHelp => ({
  name: 'limit',
  value: 'N',
  text: `list at most N (default ${range.fallback}; ${range.min} to ${range.max})`,
  range,
});
const SIZE = 'a size such as 500MB or 2GiB';
const expires = (what: string, absent: string): FlagHelp => ({
  name: 'expires',
  value: 'DURATION',
  text: `${what} after this long, such as 7d, 12h or 30m (${RANGES.expires.text}); default: ${absent}`,
  range: RANGES.expires,
});
const linkPassword = (what: string): FlagHelp => ({
  ...passwordStdin,
  text: `protect the ${what} with a password read from the first line of standard input (never on the command line)`,
});

/** Flags every user command takes. */
export const USER_FLAGS: FlagHelp[] = [
  { name: 'server', value: 'URL', text: 'the filehaven site (default: FILEHAVEN_SERVER, then the one `filehaven login` stored)' },
  { ...json, text: 'print one JSON document instead of text; a failure is {"error": {...}}' },
];

/** The settings flags every operator command takes (the table in docs/configuration.md). */
const OPERATOR_NOTE = '--data DIR (or FILEHAVEN_DATA), --database-url, --s3-* and the other settings (filehaven help settings)';

/** The --to-* flags of migrate: each storage setting's twin naming the target. */
const MIGRATE_FLAGS: FlagHelp[] = SETTINGS.filter((s) => s.key.startsWith('database') || s.key.startsWith('s3')).map((s) => ({
  name: `to-${s.flag}`,
  value: s.key === 's3ForcePathStyle' ? undefined : s.flag.replace(/^(database|s3)-/, '').toUpperCase(),
  text: `the target's ${s.description.replace(/ \(default[^)]*\)$/, '')}`,
}));

const CATALOGUE: Record<string, Entry> = {
  login: {
    audience: 'user',
    usage: '--server URL [--login L] [--password-stdin | --key -|KEY] [--json]',
    summary: "signs in: gets the account's API key and stores server and key (mode 0600)",
    flags: [
      { name: 'login', value: 'L', text: 'the login (else asked for)' },
      { ...passwordStdin, text: 'read the password from the first line of standard input (needs --login)' },
      { name: 'key', value: '-|KEY', text: 'use this API key instead of login and password; - reads it from standard input' },
    ],
  },
  logout: { audience: 'user', usage: '[--json]', summary: 'forgets the stored key (it stays valid on the server)', flags: [] },
  upload: {
    audience: 'user',
    usage: 'FILE... [--folder ID] [--parallel N] [--connections N] [--chunk-size SIZE] [--no-resume] [--expires DURATION] [--json]',
    summary: 'uploads files (resumable when the server offers tus); prints each download link',
    flags: [
      { name: 'folder', value: 'ID', text: 'move the uploaded files into this folder (checked before the first byte)' },
      {
        name: 'parallel',
        value: 'N',
        text: `files sent at once (default ${RANGES.parallel.fallback}; ${RANGES.parallel.min} to ${RANGES.parallel.max})`,
        range: RANGES.parallel,
      },
      {
        name: 'connections',
        value: 'N',
        text: `connections each file of 64MiB or more is sent over at once, as partial uploads the server joins (tus concatenation, when the server offers it; default ${RANGES.connections.fallback}, 1 sends one upload; ${RANGES.connections.min} to ${RANGES.connections.max})`,
        range: RANGES.connections,
      },
      {
        name: 'chunk-size',
        value: 'SIZE',
        text: `largest request of a resumable upload, such as 32MiB (${RANGES.chunkSize.text}; default and most: the server's --upload-chunk-size, 64MiB unless its operator set it); lower it for a proxy with a smaller body limit`,
        range: RANGES.chunkSize,
      },
      { name: 'no-resume', text: 'always send POST /files (the whole file in one request), never a resumable tus upload' },
      expires('the files expire (behave as deleted)', "the site's default, none unless its operator set one"),
    ],
  },
  download: {
    audience: 'user',
    usage: 'URL|ID [-o FILE|DIR/|-] [--force] [--password-stdin] [--json]',
    summary: 'downloads a file by link or id, or a share by its link; resumes from FILE.part',
    flags: [
      { name: 'output', short: 'o', value: 'FILE|DIR/|-', text: "where to save it (default: the file's name here; - writes to standard output)" },
      { name: 'force', text: 'replace an existing FILE' },
      { ...passwordStdin, text: "a share link's password, read from the first line of standard input" },
    ],
  },
  ls: {
    audience: 'user',
    usage: '[--folder ID|root] [--status A|B] [--limit N] [--folders] [--json]',
    summary: 'your files (or folders), newest first',
    flags: [
      { name: 'folder', value: 'ID|root', text: "only this folder's files (root: those in no folder)" },
      { name: 'status', value: 'A|B', text: 'only active (A) or blocked (B) files, or A,B' },
      limit(RANGES.lsLimit),
      { name: 'folders', text: 'list folders instead of files' },
    ],
  },
  info: { audience: 'user', usage: 'ID [--json]', summary: 'file details (premium)', flags: [] },
  link: { audience: 'user', usage: 'ID [--json]', summary: 'a signed direct download link (premium)', flags: [] },
  cp: { audience: 'user', usage: 'ID [--json]', summary: 'copies any active file into your account', flags: [] },
  mv: {
    audience: 'user',
    usage: 'ID... --folder ID [--json]',
    summary: 'moves your files into a folder, all or nothing',
    flags: [{ name: 'folder', value: 'ID', text: 'the folder to move them into' }],
  },
  mkdir: {
    audience: 'user',
    usage: 'NAME [--parent ID] [--json]',
    summary: 'creates a folder',
    flags: [{ name: 'parent', value: 'ID', text: 'create it inside this folder (default: at the top)' }],
  },
  rm: { audience: 'user', usage: 'ID... [--json]', summary: 'deletes your files', flags: [] },
  account: { audience: 'user', usage: '[--json]', summary: 'your account and premium details', flags: [] },
  expire: {
    audience: 'user',
    usage: 'FILE_ID DURATION|never [--json]',
    summary: 'sets when one of your files expires (such as 7d from now), or never',
    flags: [],
  },
  share: {
    audience: 'user',
    usage: 'ID [--folder] [--expires DURATION] [--password-stdin] [--max-downloads N] [--fast] [--json]',
    summary: 'shares one of your files (or with --folder, a folder); prints the share link',
    flags: [
      { name: 'folder', text: 'ID is a folder: the share lists its files and offers it as one ZIP' },
      expires('the link stops working', 'never, unless the site caps it'),
      linkPassword('share'),
      { name: 'max-downloads', value: 'N', text: `downloads allowed in all (${RANGES.linkCount.text}; default: unlimited)`, range: RANGES.linkCount },
      { name: 'fast', text: 'serve it uncapped on your premium traffic (the free rules when it runs out)' },
    ],
  },
  shares: {
    audience: 'user',
    usage: '[--limit N] [--json]',
    summary: 'your shares, newest first: link, expiry, downloads, password',
    flags: [limit(RANGES.lsLimit)],
  },
  unshare: { audience: 'user', usage: 'SHARE_ID [--json]', summary: 'revokes a share: its link stops working at once', flags: [] },
  request: {
    audience: 'user',
    usage: '[--folder ID] [--title T] [--message M] [--expires DURATION] [--password-stdin] [--max-files N] [--max-bytes SIZE] [--max-file-size SIZE] [--json]',
    summary: 'an upload request: a link where others upload into your folder; prints the link',
    flags: [
      { name: 'folder', value: 'ID', text: 'the folder the files land in (default: the top of your files)' },
      { name: 'title', value: 'T', text: 'a title shown to uploaders' },
      { name: 'message', value: 'M', text: 'a message shown to uploaders' },
      expires('the link stops taking files', 'never, unless the site caps it'),
      linkPassword('request'),
      { name: 'max-files', value: 'N', text: `files it takes in all (${RANGES.linkCount.text}; default: unlimited)`, range: RANGES.linkCount },
      { name: 'max-bytes', value: 'SIZE', text: `bytes it takes, all files together, such as 1GiB (${RANGES.linkBytes.text})`, range: RANGES.linkBytes },
      { name: 'max-file-size', value: 'SIZE', text: `the largest file it takes, such as 100MiB (${RANGES.linkBytes.text})`, range: RANGES.linkBytes },
    ],
  },
  requests: {
    audience: 'user',
    usage: '[--limit N] [--json]',
    summary: 'your upload requests, newest first: link, expiry, files and bytes received',
    flags: [limit(RANGES.lsLimit)],
  },
  'close-request': {
    audience: 'user',
    usage: 'REQUEST_ID [--json]',
    summary: 'closes an upload request (the files it received stay)',
    flags: [],
  },

  serve: {
    audience: 'operator',
    usage: '[--port 8080] [--host 127.0.0.1] [--data ./data] [--public-url URL] [--web-url URL] [...]',
    summary: 'runs the server until SIGINT/SIGTERM; the first start creates the operator admin',
    flags: [],
  },
  init: {
    audience: 'operator',
    usage: '[--data ./data] [--database-url URL] [--s3-bucket NAME] [...]',
    summary: "sets a site up without serving it (storage, secret, the operator admin, its password printed once); a site's second init changes nothing",
    flags: [],
  },
  accounts: {
    audience: 'operator',
    summary: 'creates and changes accounts',
    subcommands: {
      create: {
        usage: '--login L (--password W | --password-stdin) [--name N] [--email E] [--premium-days D] [--traffic SIZE] [--json]',
        summary: 'creates an account',
        flags: [
          { ...login, text: 'the new login: 1-64 letters, digits and . _ @ + -' },
          { name: 'password', value: 'W', text: 'its password, at least 8 characters (visible in ps: prefer --password-stdin)' },
          passwordStdin,
          { name: 'name', value: 'N', text: 'display name' },
          { name: 'email', value: 'E', text: 'e-mail address' },
          { name: 'premium-days', value: 'D', text: `premium for D days from now (${RANGES.premiumDays.text})`, range: RANGES.premiumDays },
          { name: 'traffic', value: 'SIZE', text: `premium traffic, ${SIZE} (${RANGES.traffic.text})`, range: RANGES.traffic },
          json,
        ],
      },
      list: { usage: '[--json]', summary: 'every account, with premium and traffic', flags: [json] },
      premium: {
        usage: '--login L [--days D | --end] [--traffic SIZE] [--json]',
        summary: 'extends, shortens or ends premium; adds traffic',
        flags: [
          login,
          {
            name: 'days',
            value: 'D',
            text: `extend by D days (from the end of an active period, else from now); negative shortens (${RANGES.premiumChange.text})`,
            range: RANGES.premiumChange,
          },
          { name: 'end', text: 'end the active premium period now' },
          { name: 'traffic', value: 'SIZE', text: `add this much traffic, ${SIZE} (${RANGES.traffic.text})`, range: RANGES.traffic },
          json,
        ],
      },
      disable: { usage: '--login L', summary: "stops the account's key, sign-in and direct links at once", flags: [login] },
      enable: { usage: '--login L', summary: 'lets a disabled account in again', flags: [login] },
      'set-password': {
        usage: '--login L (--password W | --password-stdin)',
        summary: "replaces the password and signs the account's web sessions out",
        flags: [login, { name: 'password', value: 'W', text: 'the new password (visible in ps: prefer --password-stdin)' }, passwordStdin],
      },
      'regenerate-key': { usage: '--login L', summary: 'replaces the API key and prints the new one alone', flags: [login] },
      'sign-out': { usage: '--login L', summary: 'ends every web session of the account (its API key keeps working)', flags: [login] },
      'reset-second-factor': {
        usage: '--login L',
        summary: "removes the account's two-step verification (TOTP and recovery codes) when its owner lost them; passkeys stay",
        flags: [login],
      },
      balance: {
        usage: '--login L (--set AMOUNT | --add AMOUNT)',
        summary: 'sets or changes the balance (never below 0.00)',
        flags: [
          login,
          { name: 'set', value: 'AMOUNT', text: `the new balance, such as 12.50 (${RANGES.balance.text})`, range: RANGES.balance },
          { name: 'add', value: 'AMOUNT', text: `add this amount; negative takes, such as -3.00 (${RANGES.balanceChange.text})`, range: RANGES.balanceChange },
        ],
      },
    },
  },
  files: {
    audience: 'operator',
    summary: 'lists, inspects and moderates files',
    subcommands: {
      block: { usage: 'FILE_ID', summary: 'blocks an active file (its links stop)', flags: [] },
      unblock: { usage: 'FILE_ID', summary: 'makes a blocked file active again', flags: [] },
      delete: { usage: 'FILE_ID', summary: 'deletes a file (its bytes go with its last reference)', flags: [] },
      list: {
        usage: '[--login L] [--status A|B|D] [--limit N] [--before FILE_ID] [--json]',
        summary: 'files, newest first',
        flags: [
          { ...login, text: "only this account's files" },
          { name: 'status', value: 'A|B|D', text: 'only active, blocked or deleted files (letters or names, comma-separated)' },
          limit(RANGES.operatorLimit),
          { name: 'before', value: 'FILE_ID', text: 'the next page: the files listed after this one (the last ID of the page before)' },
          json,
        ],
      },
      info: { usage: 'FILE_ID [--json]', summary: 'everything about one file', flags: [json] },
    },
  },
  blacklist: {
    audience: 'operator',
    summary: 'refuses uploads by SHA-256 digest or file-name pattern',
    subcommands: {
      add: {
        usage: 'SHA256 [--reason TEXT] [--block-existing]',
        summary: 'refuses uploads with this digest',
        flags: [reason, { name: 'block-existing', text: 'also block every active file with this digest now' }],
      },
      remove: { usage: 'SHA256', summary: 'takes a digest off the list', flags: [] },
      'add-name': { usage: 'PATTERN [--reason TEXT]', summary: "refuses uploads whose name matches (* and ?, e.g. '*.exe'; quote it)", flags: [reason] },
      'remove-name': { usage: 'PATTERN', summary: 'takes a name pattern off the list', flags: [] },
      list: { usage: '[--json]', summary: 'the digests and name patterns', flags: [json] },
    },
  },
  audit: {
    audience: 'operator',
    usage: '[--limit N] [--action PREFIX] [--json]',
    summary: 'the audit log of operator actions, newest first',
    flags: [limit(RANGES.operatorLimit), { name: 'action', value: 'PREFIX', text: 'only actions starting with PREFIX, such as accounts.' }, json],
  },
  gc: {
    audience: 'operator',
    usage: '[--dry-run] [--wait] [--json]',
    summary: 'one housekeeping pass (the server runs it every --gc-interval)',
    flags: [
      { name: 'dry-run', text: 'only count what a run would remove' },
      { name: 'wait', text: 'when another server runs gc, wait for it to finish and run then' },
      json,
    ],
  },
  stats: { audience: 'operator', usage: '[--json]', summary: 'accounts, files, storage, de-duplication, traffic, expiry', flags: [json] },
  reservations: { audience: 'operator', usage: '[--json]', summary: 'the transfers in flight and who holds them', flags: [json] },
  backup: {
    audience: 'operator',
    usage: '--to DIR [--json]',
    summary: 'a consistent copy of the (running) site into a new or empty DIR',
    flags: [{ name: 'to', value: 'DIR', text: 'where to put the backup (new or empty)' }, json],
  },
  restore: {
    audience: 'operator',
    usage: '--from DIR [--json]',
    summary: 'a backup into the --data folder, which must be new or empty',
    flags: [{ name: 'from', value: 'DIR', text: 'the backup to restore' }, json],
  },
  migrate: {
    audience: 'operator',
    usage: '--to-database-url URL [--to-database-schema NAME] and/or --to-s3-bucket NAME [--to-s3-*]',
    summary: 'moves the STOPPED site to PostgreSQL and/or S3; a rerun resumes',
    flags: MIGRATE_FLAGS,
  },
};

const isGroup = (entry: Entry): entry is { audience: Audience } & GroupHelp => 'subcommands' in entry;

/** Every flag of every command, with the command and subcommand it belongs to (for tests over all of them). */
export function everyFlag(): Array<{ command: string; sub?: string; flag: FlagHelp }> {
  return Object.entries(CATALOGUE).flatMap(([command, entry]) =>
    isGroup(entry)
      ? Object.entries(entry.subcommands).flatMap(([sub, help]) => help.flags.map((flag) => ({ command, sub, flag })))
      : entry.flags.map((flag) => ({ command, flag })),
  );
}

/** Whether `name` is a command. */
export function isCommand(name: string): boolean {
  return Object.hasOwn(CATALOGUE, name);
}

/** The subcommands of a group, or null for a plain command. */
export function subcommandsOf(command: string): string[] | null {
  const entry = CATALOGUE[command];
  return entry && isGroup(entry) ? Object.keys(entry.subcommands) : null;
}

function commandHelp(command: string, sub?: string): CommandHelp {
  const entry = CATALOGUE[command]!;
  if (!isGroup(entry)) return entry;
  const found = sub !== undefined && Object.hasOwn(entry.subcommands, sub) ? entry.subcommands[sub] : undefined;
  if (!found) throw new Error(`no help for ${command} ${sub ?? ''}`);
  return found;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** The parseArgs options of a command's own flags (the common ones are added by the parser). */
export function optionsFor(command: string, sub?: string): Options {
  return Object.fromEntries(
    commandHelp(command, sub).flags.map(
      (flag) => [flag.name, { type: flag.value ? 'string' : 'boolean', ...(flag.short ? { short: flag.short } : {}) }] as const,
    ),
  );
}

/** Flag lines, their explanations aligned. */
function flagLines(flags: FlagHelp[]): string[] {
  const names = flags.map((f) => `${f.short ? `-${f.short}, ` : ''}--${f.name}${f.value ? ` ${f.value}` : ''}`);
  const width = Math.max(0, ...names.map((n) => n.length)) + 2;
  return flags.map((f, i) => `  ${names[i]!.padEnd(width)}${f.text}`);
}

function usageLine(command: string, sub: string | undefined, help: CommandHelp): string {
  return ['filehaven', command, sub, help.usage].filter(Boolean).join(' ');
}

/** `filehaven help CMD [SUB]`: the usage line, then one line per flag. For a group without SUB, each subcommand. */
export function helpText(command: string, sub?: string): string {
  const entry = CATALOGUE[command]!;
  const settings =
    entry.audience === 'operator'
      ? `Every operator command also takes ${OPERATOR_NOTE}.`
      : 'Server and key: --server, FILEHAVEN_SERVER and FILEHAVEN_KEY, else the stored login.';
  if (isGroup(entry) && (sub === undefined || !Object.hasOwn(entry.subcommands, sub))) {
    const lines = [`filehaven ${command}: ${entry.summary}`, ''];
    for (const [name, help] of Object.entries(entry.subcommands)) lines.push(`  ${usageLine(command, name, help)}`, `      ${help.summary}`);
    lines.push('', `Run 'filehaven help ${command} SUBCOMMAND' for its flags. ${settings}`);
    return lines.join('\n');
  }
  const help = commandHelp(command, sub);
  const flags = entry.audience === 'user' ? [...help.flags, ...USER_FLAGS] : help.flags;
  const lines = [`usage: ${usageLine(command, sub, help)}`, '', help.summary];
  if (flags.length > 0) lines.push('', ...flagLines(flags));
  if (command === 'serve' || command === 'init') lines.push('', `${command} takes the settings: filehaven help settings.`);
  else lines.push('', settings);
  return lines.join('\n');
}

/** `filehaven help settings`: every setting's flag, environment variable and meaning. */
export function settingsHelp(): string {
  const flags: FlagHelp[] = SETTINGS.map((s) => ({ name: s.flag, value: 'V', text: `${s.description}; ${s.expected} (${s.env})` }));
  return ['Settings every operator command takes (flag, else environment variable, else --config FILE, else the default):', '', ...flagLines(flags)].join('\n');
}

/** `filehaven help`: every command's usage line, users' and operators' apart. */
export function overview(): string {
  const lines = (audience: Audience) =>
    Object.entries(CATALOGUE)
      .filter(([, entry]) => entry.audience === audience)
      .flatMap(([name, entry]) =>
        isGroup(entry) ? Object.entries(entry.subcommands).map(([sub, help]) => `  ${usageLine(name, sub, help)}`) : [`  ${usageLine(name, undefined, entry)}`],
      );
  return `usage:

For users of a filehaven site (talk to a server over its API; server and key from
filehaven login, or FILEHAVEN_SERVER and FILEHAVEN_KEY; exit codes 0 done, 1 failed,
2 usage, 3 not signed in or key refused, 130 interrupted):
${lines('user').join('\n')}

For operators of this server (work on its data folder and storage, not over HTTP; exit
codes 0 done, 1 failed, 2 usage):
${lines('operator').join('\n')}

Every operator command takes --data DIR (or FILEHAVEN_DATA) and the other settings.
Run 'filehaven help COMMAND' (or 'filehaven COMMAND --help') for a command's flags,
'filehaven help settings' for the settings, 'filehaven --version' for the version.`;
}
