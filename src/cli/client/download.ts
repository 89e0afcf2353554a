import { createWriteStream } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DownloadOptions, DownloadStream } from '../../client/index.js';
import { UsageError } from '../args.js';
import { firstLineOfStdin, onePositional } from '../flags.js';
import { optionsFor } from '../help.js';
import { humanBytes, shown } from './display.js';
import { localFileName } from './local-file-name.js';
import { showProgress, transferBars } from './transfer-progress.js';
import { runUserCommand } from './user-command.js';

/** What is remembered beside a partial download, so a later run resumes only the same bytes. */
interface PartState {
  /** File id the bytes belong to. */
  id: string;
  /** ETag of the file, sent back as If-Range. */
  etag: string | null;
}

/** A share link: `{web_url}/s/<id>`, or `/s/<id>/download[/<file ref>]` (issue 25). */
const SHARE_PATH = /\/s\/([A-Za-z0-9]+)(?:\/download(?:\/([A-Za-z0-9_-]+))?)?\/?$/;

/** The share's password from the first line of stdin. */
async function sharePassword(): Promise<string> {
  const password = await firstLineOfStdin();
  if (password === '') throw new UsageError('--password-stdin: no password on standard input');
  return password;
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

async function readPartState(file: string): Promise<PartState | null> {
  try {
    const state = JSON.parse(await readFile(file, 'utf8')) as Partial<PartState>;
    return typeof state.id === 'string' ? { id: state.id, etag: typeof state.etag === 'string' ? state.etag : null } : null;
  } catch {
    return null;
  }
}

/**
 * `filehaven download`: streams a file to FILE.part, then renames it to FILE once its
 * size is the file's. A FILE.part left by an interrupted (even killed) run is resumed
 * with `Range: bytes=<its size>-` and `If-Range: <ETag>` (kept in FILE.part.json), so a
 * file that changed meanwhile comes back whole instead of spliced. FILE itself is only
 * ever complete; an existing FILE is left alone unless --force.
 */
export async function downloadCommand(args: string[]): Promise<void> {
  await runUserCommand('download', args, optionsFor('download'), async (command) => {
    const ref = onePositional(command.positionals, 'download', 'URL or file id');
    if (!/^https?:\/\//i.test(ref) && !/^[A-Za-z0-9]+$/.test(ref)) throw new UsageError(`not a download link or a file id: "${ref}"`);
    const output = command.values.output as string | undefined;
    if (output === '-' && command.json) throw new UsageError('-o - writes the file to stdout, where --json would go: use one of them');
    // A public download link needs no account: without a stored server, its own site is
    // the server, and no key goes with it unless one is stored for that site.
    const link = /^https?:\/\//i.test(ref) ? new URL(ref) : null;
    const share = link ? SHARE_PATH.exec(link.pathname) : null;
    if (!share && command.values['password-stdin'] === true) throw new UsageError('--password-stdin is for share links ({web_url}/s/<id>)');
    const client = link ? await command.client({ key: false, fallbackServer: link.origin }) : await command.client();

    // What is fetched, and how: a share link (issue 25) with its password and never the
    // key (its HEAD does not count as a download), else a file by link or id.
    let target: { id: string; name: string; direct: boolean };
    let fetchBytes: (options: DownloadOptions) => Promise<DownloadStream>;
    if (share) {
      const password = command.values['password-stdin'] === true ? await sharePassword() : undefined;
      const head = await client.downloadShare(ref, { password, method: 'HEAD' });
      // The share and the file of it: a .part of another share is not resumed.
      target = { id: share[2] ?? share[1]!, name: head.name, direct: false };
      fetchBytes = (options) => client.downloadShare(ref, { ...options, password });
    } else {
      const resolved = await client.resolveDownload(ref);
      target = resolved;
      fetchBytes = (options) => client.download(resolved, options);
    }

    if (output === '-') {
      // To stdout: no resume, no progress; the bytes are the output.
      const download = await fetchBytes({});
      await pipeline(download.body, process.stdout);
      return { json: null };
    }

    let file = output ?? localFileName(target.name, target.id);
    if (
      output !== undefined &&
      (output.endsWith('/') ||
        (await stat(output).then(
          (s) => s.isDirectory(),
          () => false,
        )))
    ) {
      file = path.join(output, localFileName(target.name, target.id));
    }
    if ((await exists(file)) && command.values.force !== true) throw new Error(`${file} exists; use --force to replace it`);
    const part = `${file}.part`;
    const stateFile = `${part}.json`;
    const state = await readPartState(stateFile);
    const held = await stat(part).then(
      (s) => s.size,
      () => 0,
    );
    // Bytes of another file (or of an unknown one) under the same name are not resumed.
    const offset = held > 0 && state?.id === target.id ? held : 0;

    const download = await fetchBytes({ offset, ...(state?.etag ? { ifRange: state.etag } : {}) });
    // Listened to before anything else is awaited: an 'error' nobody hears ends the process.
    // A body that fails meanwhile is destroyed, and the pipeline below reports it.
    download.body.on('error', () => {});
    // A file that comes back whole empties .part before the state names its new version:
    // a kill in between never leaves old bytes beside the new ETag.
    if (download.offset === 0) await writeFile(part, '');
    await writeFile(stateFile, JSON.stringify({ id: target.id, etag: download.etag } satisfies PartState));
    const bars = transferBars(showProgress(command.json));
    const bar = bars.add(shown(path.basename(file)), download.size, download.offset);
    let done = download.offset;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        done += chunk.length;
        bar.update(done);
        callback(null, chunk);
      },
    });
    try {
      // Appended at the offset the server answered from (0: the file came back whole).
      await pipeline(download.body, counter, createWriteStream(part, { flags: download.offset > 0 ? 'r+' : 'w', start: download.offset }), {
        signal: command.signal,
      });
    } finally {
      bar.stop();
      bars.stop();
    }
    const written = (await stat(part)).size;
    if (written !== download.size) throw new Error(`${part} holds ${written} bytes, the file has ${download.size}; run the command again`);
    await rename(part, file);
    await rm(stateFile, { force: true });
    const resumed = download.offset > 0 ? ` (resumed at ${humanBytes(download.offset)})` : '';
    return {
      human: `saved ${shown(file)}: ${humanBytes(download.size)}${resumed}`,
      json: { id: target.id, name: download.name, file, size: download.size, resumedFrom: download.offset, direct: target.direct },
    };
  });
}
