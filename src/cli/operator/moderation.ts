import { sqlDateTime } from '../../domain/dates.js';
import { type FileStatus, isFileStatus } from '../../domain/types.js';
import type { OperatorFileInfo, OperatorFileView } from '../../services/moderation-service.js';
import { type ParsedArgs, parseCommandArgs, UsageError } from '../args.js';
import { cliActor } from '../audit-trail.js';
import { columns, humanBytes, shown } from '../client/display.js';
import { countFlag, noPositionals, onePositional, RANGES, reasonFlag } from '../flags.js';
import { humanDateOrDash } from '../format.js';
import { optionsFor, subcommandsOf } from '../help.js';
import { withServices } from '../with-services.js';

const STATE_NAMES: Record<FileStatus, string> = { A: 'active', B: 'blocked', D: 'deleted' };
const FILES_SUBCOMMANDS = subcommandsOf('files')!;
const BLACKLIST_SUBCOMMANDS = subcommandsOf('blacklist')!;

/** `--status A,B` (letters or names, any case) → states. */
function statusFlag(values: ParsedArgs['values']): FileStatus[] | undefined {
  const raw = values.status;
  if (typeof raw !== 'string') return undefined;
  const byName: Record<string, string> = { active: 'A', blocked: 'B', deleted: 'D' };
  const states = raw.split(',').map((part) => {
    const word = part.trim().toLowerCase();
    const letter = byName[word] ?? word.toUpperCase();
    if (!isFileStatus(letter)) throw new UsageError(`--status expects A, B or D (or several, comma-separated), got "${raw}"`);
    return letter;
  });
  return [...new Set(states)];
}

function fileJson(file: OperatorFileView) {
  return {
    id: file.id,
    name: file.name,
    ownerId: file.ownerId,
    ownerLogin: file.ownerLogin,
    status: file.status,
    size: file.size,
    sha256: file.sha256,
    created: sqlDateTime(file.createdAt),
    downloads: file.downloads,
    lastDownload: sqlDateTime(file.lastDownloadAt) || null,
    folderId: file.folderId,
  };
}

function printInfo(file: OperatorFileInfo): void {
  const folder = file.folder ? `${file.folder.id} "${file.folder.name}"` : '- (root)';
  const rows: [string, string | number][] = [
    ['id', file.id],
    ['name', file.name],
    ['owner', `${file.ownerLogin || '?'} (account ${file.ownerId})`],
    ['status', `${file.status} (${STATE_NAMES[file.status]})`],
    ['size', `${humanBytes(file.size)} (${file.size} bytes)`],
    ['sha256', file.sha256],
    ['created', `${humanDateOrDash(file.createdAt)} UTC`],
    ['downloads', file.downloads],
    ['last download', humanDateOrDash(file.lastDownloadAt)],
    ['folder', folder],
  ];
  for (const [label, value] of rows) console.log(`${`${label}:`.padEnd(15)}${value}`);
}

/** `filehaven files block|unblock|delete|list|info` */
export async function filesCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (!sub || !FILES_SUBCOMMANDS.includes(sub))
    throw new UsageError(sub ? `unknown files command "${sub}"` : `files needs a command: ${FILES_SUBCOMMANDS.join(', ')}`);
  const { positionals, values, settings } = parseCommandArgs(rest, optionsFor('files', sub));
  switch (sub) {
    case 'block':
    case 'unblock':
    case 'delete': {
      const id = onePositional(positionals, `files ${sub}`, 'file id');
      await withServices(settings, async (services) => {
        const file = await services.operator.actions.changeFile(cliActor(), sub, id);
        console.log(`file ${file.id} "${file.name}" is now ${STATE_NAMES[file.status]} (${file.status})`);
      });
      return;
    }
    case 'list': {
      noPositionals(positionals, 'files list');
      const query = {
        login: typeof values.login === 'string' ? values.login : undefined,
        states: statusFlag(values),
        limit: countFlag(values, 'limit', RANGES.operatorLimit),
        before: typeof values.before === 'string' ? values.before : undefined,
      };
      await withServices(settings, async (services) => {
        const files = await services.moderation.listFiles(query);
        if (values.json) return console.log(JSON.stringify(files.map(fileJson)));
        if (files.length === 0) return console.log('no files');
        const rows = files.map((f) => [
          f.id,
          f.status,
          humanBytes(f.size),
          humanDateOrDash(f.createdAt),
          f.ownerLogin || `#${f.ownerId}`,
          String(f.downloads),
          shown(f.name),
        ]);
        console.log(columns([['ID', 'STATUS', 'SIZE', 'CREATED (UTC)', 'OWNER', 'DOWNLOADS', 'NAME'], ...rows]));
      });
      return;
    }
    case 'info': {
      const id = onePositional(positionals, 'files info', 'file id');
      await withServices(settings, async (services) => {
        const file = await services.moderation.fileInfo(id);
        if (values.json) return console.log(JSON.stringify({ ...fileJson(file), folderName: file.folder?.name ?? null }));
        printInfo(file);
      });
      return;
    }
  }
}

/** `filehaven blacklist add|remove|add-name|remove-name|list` */
export async function blacklistCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (!sub || !BLACKLIST_SUBCOMMANDS.includes(sub))
    throw new UsageError(sub ? `unknown blacklist command "${sub}"` : `blacklist needs a command: ${BLACKLIST_SUBCOMMANDS.join(', ')}`);
  const { positionals, values, settings } = parseCommandArgs(rest, optionsFor('blacklist', sub));
  const reason = reasonFlag(values);
  if (sub === 'list') noPositionals(positionals, 'blacklist list');
  const argument = sub === 'list' ? '' : onePositional(positionals, `blacklist ${sub}`, sub.endsWith('-name') ? 'name pattern' : 'sha256');
  await withServices(settings, async (services) => {
    switch (sub) {
      case 'add': {
        const { digest, blocked } = await services.operator.actions.blacklistDigest(cliActor(), argument, reason, values['block-existing'] === true);
        console.log(`added ${digest}`);
        if (values['block-existing']) console.log(`blocked ${blocked} existing file${blocked === 1 ? '' : 's'} with this digest`);
        return;
      }
      case 'remove': {
        const digest = await services.operator.actions.unblacklistDigest(cliActor(), argument);
        console.log(`removed ${digest}`);
        return;
      }
      case 'add-name': {
        const pattern = await services.operator.actions.blacklistName(cliActor(), argument, reason);
        console.log(`added name pattern ${pattern}`);
        return;
      }
      case 'remove-name': {
        const pattern = await services.operator.actions.unblacklistName(cliActor(), argument);
        console.log(`removed name pattern ${pattern}`);
        return;
      }
      case 'list': {
        const [digests, names] = await Promise.all([services.files.blacklist(), services.moderation.namePatterns()]);
        if (values.json) {
          const entry = (e: { reason: string; createdAt: number }) => ({ reason: e.reason, created: sqlDateTime(e.createdAt) });
          return console.log(
            JSON.stringify({
              digests: digests.map((d) => ({ sha256: d.sha256, ...entry(d) })),
              names: names.map((n) => ({ pattern: n.pattern, ...entry(n) })),
            }),
          );
        }
        // Digest rows as before; pattern rows prefixed `name:` (a digest never holds a colon).
        for (const entry of digests) console.log([entry.sha256, humanDateOrDash(entry.createdAt), entry.reason].join('\t'));
        for (const entry of names) console.log([`name:${entry.pattern}`, humanDateOrDash(entry.createdAt), entry.reason].join('\t'));
        return;
      }
    }
  });
}
