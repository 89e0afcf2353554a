import type { Share, UploadRequest } from '../../client/index.js';
import { UsageError } from '../args.js';
import { countFlag, durationFlag, durationSeconds, firstLineOfStdin, noPositionals, optionalCountFlag, RANGES, sizeFlag } from '../flags.js';
import { optionsFor } from '../help.js';
import { columns, humanBytes, shown } from './display.js';
import { folderFlag, oneId } from './my-files.js';
import { runUserCommand } from './user-command.js';

/*
 * Sharing from the terminal (issue 25): share links with expiry, password and download
 * limit; upload requests; file expiry. Every flag is checked before the server is asked
 * (and before a password is read), so a typo costs nothing.
 */

/** The password of --password-stdin (first line of stdin), or undefined without the flag. */
async function linkPassword(values: Record<string, string | boolean | undefined>): Promise<string | undefined> {
  if (values['password-stdin'] !== true) return undefined;
  const password = await firstLineOfStdin();
  if (password === '') throw new UsageError('--password-stdin: no password on standard input');
  return password;
}

const when = (expires: string | null) => expires ?? 'never';
const yesNo = (value: boolean) => (value ? 'yes' : 'no');
const ofLimit = (count: string, limit: string | null) => `${count}/${limit ?? 'unlimited'}`;

/** `filehaven share ID [--folder]`: creates a share and prints its link. */
export async function shareCommand(args: string[]): Promise<void> {
  await runUserCommand('share', args, optionsFor('share'), async (command) => {
    const isFolder = command.values.folder === true;
    const id = oneId(command.positionals, 'share', isFolder ? 'folder id' : 'file id');
    const expiresIn = durationFlag(command.values, 'expires', RANGES.expires);
    const maxDownloads = optionalCountFlag(command.values, 'max-downloads', RANGES.linkCount);
    const password = await linkPassword(command.values);
    const client = await command.client();
    const share = await client.createShare(isFolder ? { folder: id } : { file: id }, {
      expiresIn,
      password,
      maxDownloads,
      fast: command.values.fast === true,
    });
    return { human: share.link, json: share };
  });
}

/** Fetches pages until `limit` items or the last page. */
async function upTo<T>(limit: number, page: (limit: number, cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>) {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const next = await page(Math.min(500, limit - items.length), cursor);
    items.push(...next.items);
    cursor = next.nextCursor ?? undefined;
  } while (cursor && items.length < limit);
  return { items, more: cursor !== undefined };
}

/** `filehaven shares`: a table of your shares, newest first. */
export async function sharesCommand(args: string[]): Promise<void> {
  await runUserCommand('shares', args, optionsFor('shares'), async (command) => {
    noPositionals(command.positionals, 'shares');
    const limit = countFlag(command.values, 'limit', RANGES.lsLimit);
    const client = await command.client();
    const { items, more } = await upTo<Share>(limit, (size, cursor) => client.listShares({ limit: size, cursor }));
    const rows = items.map((s) => [
      s.id,
      s.link,
      when(s.expires),
      ofLimit(String(s.downloads), s.maxDownloads === null ? null : String(s.maxDownloads)),
      yesNo(s.protected),
      shown(s.name),
    ]);
    const human = rows.length ? columns([['ID', 'LINK', 'EXPIRES', 'DOWNLOADS', 'PASSWORD', 'NAME'], ...rows]) : 'no shares';
    return { human, json: { shares: items, more } };
  });
}

/** `filehaven unshare SHARE_ID`: revokes a share. */
export async function unshareCommand(args: string[]): Promise<void> {
  await runUserCommand('unshare', args, optionsFor('unshare'), async (command) => {
    const id = oneId(command.positionals, 'unshare', 'share id');
    const revoked = await (await command.client()).revokeShare(id);
    return { human: `revoked ${revoked.id} (${shown(revoked.name)})`, json: revoked };
  });
}

/** `filehaven request`: creates an upload request and prints its link. */
export async function requestCommand(args: string[]): Promise<void> {
  await runUserCommand('request', args, optionsFor('request'), async (command) => {
    noPositionals(command.positionals, 'request');
    const folder = folderFlag(command.values.folder, 'folder', false);
    const expiresIn = durationFlag(command.values, 'expires', RANGES.expires);
    const maxFiles = optionalCountFlag(command.values, 'max-files', RANGES.linkCount);
    const maxBytes = sizeFlag(command.values, 'max-bytes', RANGES.linkBytes);
    const maxFileSize = sizeFlag(command.values, 'max-file-size', RANGES.linkBytes);
    const title = command.values.title as string | undefined;
    const message = command.values.message as string | undefined;
    const password = await linkPassword(command.values);
    const client = await command.client();
    const request = await client.createUploadRequest({ folder, title, message, expiresIn, password, maxFiles, maxBytes, maxFileSize });
    return { human: request.link, json: request };
  });
}

/** `filehaven requests`: a table of your upload requests, newest first. */
export async function requestsCommand(args: string[]): Promise<void> {
  await runUserCommand('requests', args, optionsFor('requests'), async (command) => {
    noPositionals(command.positionals, 'requests');
    const limit = countFlag(command.values, 'limit', RANGES.lsLimit);
    const client = await command.client();
    const { items, more } = await upTo<UploadRequest>(limit, (size, cursor) => client.listUploadRequests({ limit: size, cursor }));
    const rows = items.map((r) => [
      r.id,
      r.link,
      when(r.expires),
      ofLimit(String(r.files), r.maxFiles === null ? null : String(r.maxFiles)),
      ofLimit(humanBytes(r.bytes), r.maxBytes === null ? null : humanBytes(r.maxBytes)),
      yesNo(r.protected),
      shown(r.title),
    ]);
    const human = rows.length ? columns([['ID', 'LINK', 'EXPIRES', 'FILES', 'BYTES', 'PASSWORD', 'TITLE'], ...rows]) : 'no upload requests';
    return { human, json: { requests: items, more } };
  });
}

/** `filehaven close-request REQUEST_ID`: closes an upload request; its files stay. */
export async function closeRequestCommand(args: string[]): Promise<void> {
  await runUserCommand('close-request', args, optionsFor('close-request'), async (command) => {
    const id = oneId(command.positionals, 'close-request', 'request id');
    const closed = await (await command.client()).closeUploadRequest(id);
    return { human: `closed ${closed.id}${closed.name ? ` (${shown(closed.name)})` : ''}`, json: closed };
  });
}

/** `filehaven expire FILE_ID DURATION|never`: when one of your files expires. */
export async function expireCommand(args: string[]): Promise<void> {
  await runUserCommand('expire', args, optionsFor('expire'), async (command) => {
    if (command.positionals.length !== 2) throw new UsageError('expire takes a file id and a duration (such as 7d) or never');
    const id = oneId(command.positionals.slice(0, 1), 'expire');
    const raw = command.positionals[1]!;
    let expiresIn: number | null;
    if (raw === 'never') expiresIn = null;
    else {
      const seconds = durationSeconds(raw);
      if (seconds === null || seconds < RANGES.expires.min || seconds > RANGES.expires.max)
        throw new UsageError(`expire takes ${RANGES.expires.text} (such as 7d, 12h or 30m) or never, got "${raw}"`);
      expiresIn = seconds;
    }
    const file = await (await command.client()).setFileExpiry(id, expiresIn);
    return { human: file.expires === null ? `${file.id} never expires` : `${file.id} expires ${file.expires} UTC`, json: file };
  });
}
