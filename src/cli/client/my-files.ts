import type { FileStatus, FileSummary, FolderSummary } from '../../client/index.js';
import { UsageError } from '../args.js';
import { countFlag, noPositionals, onePositional, RANGES } from '../flags.js';
import { optionsFor } from '../help.js';
import { EXIT } from './command-exit.js';
import { columns, fields, humanBytes, shown } from './display.js';
import { errorJson, runUserCommand } from './user-command.js';

/** Ids go into URL paths: letters and digits only, refused as usage mistakes otherwise. */
function ids(positionals: string[], command: string, what = 'file id'): string[] {
  if (positionals.length === 0) throw new UsageError(`${command} takes at least one ${what}`);
  for (const id of positionals) if (!/^[A-Za-z0-9]+$/.test(id)) throw new UsageError(`not a ${what}: "${id}"`);
  return positionals;
}

/** The one id a command takes (a file, a share, a request), letters and digits only. */
export function oneId(positionals: string[], command: string, what = 'file id'): string {
  return ids([onePositional(positionals, command, what)], command, what)[0]!;
}

/** A folder id flag (`--folder ID`, `--parent ID`), `root` where allowed. */
export function folderFlag(value: string | boolean | undefined, flag: string, allowRoot: boolean): string | undefined {
  if (typeof value !== 'string') return undefined;
  if ((allowRoot && value === 'root') || /^[A-Za-z0-9]+$/.test(value)) return value;
  throw new UsageError(`--${flag} expects a folder id${allowRoot ? ' or root' : ''}, got "${value}"`);
}

function statusFlag(value: string | boolean | undefined): FileStatus[] | undefined {
  if (typeof value !== 'string') return undefined;
  const states = value.split(',').map((part) => part.trim().toUpperCase());
  if (!states.every((state): state is FileStatus => state === 'A' || state === 'B')) throw new UsageError(`--status expects A, B or A,B, got "${value}"`);
  return states;
}

/** `filehaven ls`: your files (or folders), newest first, page after page up to --limit. */
export async function lsCommand(args: string[]): Promise<void> {
  await runUserCommand('ls', args, optionsFor('ls'), async (command) => {
    noPositionals(command.positionals, 'ls');
    const limit = countFlag(command.values, 'limit', RANGES.lsLimit);
    const client = await command.client();
    if (command.values.folders === true) {
      if (command.values.status !== undefined) throw new UsageError('--status lists files, not folders');
      const parent = folderFlag(command.values.folder, 'folder', true);
      const folders: FolderSummary[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listFolders({ parent, limit: Math.min(500, limit - folders.length), cursor });
        folders.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor && folders.length < limit);
      const rows = folders.map((f) => [f.id, String(f.files ?? 0), humanBytes(f.size), shown(f.name)]);
      return { human: rows.length ? columns([['ID', 'FILES', 'SIZE', 'NAME'], ...rows]) : 'no folders', json: { folders } };
    }
    const folder = folderFlag(command.values.folder, 'folder', true);
    const status = statusFlag(command.values.status);
    const files: FileSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listFiles({ folder, status, limit: Math.min(500, limit - files.length), cursor });
      files.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && files.length < limit);
    const rows = files.map((f) => [f.id, f.status, humanBytes(f.size), f.created, shown(f.name)]);
    return { human: rows.length ? columns([['ID', 'STATUS', 'SIZE', 'CREATED', 'NAME'], ...rows]) : 'no files', json: { files, more: cursor !== undefined } };
  });
}

/** `filehaven info ID`: file details (GET /files/<id>, premium). */
export async function infoCommand(args: string[]): Promise<void> {
  await runUserCommand('info', args, optionsFor('info'), async (command) => {
    const id = oneId(command.positionals, 'info');
    const file = await (await command.client()).fileDetails(id);
    const status = file.status === 'A' ? 'A (active)' : 'B (blocked)';
    return {
      human: fields([
        ['id', file.id],
        ['name', shown(file.name)],
        ['status', status],
        ['size', `${file.size} bytes (${humanBytes(file.size)})`],
        ['link', file.downloadLink],
      ]),
      json: file,
    };
  });
}

/** `filehaven link ID`: a signed direct link (premium); the user asked for it, so it is printed. */
export async function linkCommand(args: string[]): Promise<void> {
  await runUserCommand('link', args, optionsFor('link'), async (command) => {
    const id = oneId(command.positionals, 'link');
    const link = await (await command.client()).directLink(id);
    return { human: link.url, json: link };
  });
}

/** `filehaven cp ID`: a copy of any active file in your account. */
export async function cpCommand(args: string[]): Promise<void> {
  await runUserCommand('cp', args, optionsFor('cp'), async (command) => {
    const id = oneId(command.positionals, 'cp');
    const copy = await (await command.client()).copy(id);
    return { human: `${copy.id}  ${copy.downloadLink}`, json: copy };
  });
}

/** `filehaven mv ID... --folder ID`: all or nothing (SPEC.md, API.md 7). */
export async function mvCommand(args: string[]): Promise<void> {
  await runUserCommand('mv', args, optionsFor('mv'), async (command) => {
    const files = ids(command.positionals, 'mv');
    const folder = folderFlag(command.values.folder, 'folder', false);
    if (folder === undefined) throw new UsageError('mv needs --folder ID');
    const result = await (await command.client()).move(files, folder);
    return { human: `moved ${result.moved} file${result.moved === 1 ? '' : 's'} into ${result.folderId} (${result.folderLink})`, json: result };
  });
}

/** `filehaven mkdir NAME`: a folder at the top or in --parent. */
export async function mkdirCommand(args: string[]): Promise<void> {
  await runUserCommand('mkdir', args, optionsFor('mkdir'), async (command) => {
    const name = onePositional(command.positionals, 'mkdir', 'folder NAME');
    const parent = folderFlag(command.values.parent, 'parent', false);
    const folder = await (await command.client()).createFolder(name, parent);
    return { human: `${folder.id}  ${folder.folderLink}`, json: folder };
  });
}

/** `filehaven rm ID...`: deletes your files, each on its own; the failures are reported and make the exit code. */
export async function rmCommand(args: string[]): Promise<void> {
  await runUserCommand('rm', args, optionsFor('rm'), async (command) => {
    const files = ids(command.positionals, 'rm');
    const client = await command.client();
    const results: Array<Record<string, unknown>> = [];
    let exitCode: number = EXIT.ok;
    const lines: string[] = [];
    for (const id of files) {
      try {
        const deleted = await client.deleteFile(id);
        results.push({ ...deleted });
        lines.push(`deleted ${deleted.id} (${shown(deleted.name)})`);
      } catch (error) {
        if (command.signal.aborted) throw error;
        results.push({ id, error: errorJson(error) });
        exitCode = Math.max(exitCode, command.warn(error, id));
      }
    }
    return { human: lines.join('\n'), json: { files: results }, exitCode };
  });
}
