import { stat } from 'node:fs/promises';
import path from 'node:path';
import { FilehavenApiError, type StoredFile } from '../../client/index.js';
import { UsageError } from '../args.js';
import { countFlag, durationFlag, RANGES, sizeFlag } from '../flags.js';
import { optionsFor } from '../help.js';
import { EXIT } from './command-exit.js';
import { showProgress, transferBars } from './transfer-progress.js';
import { errorJson, runUserCommand } from './user-command.js';

/** One stored file, for --json: `deleteLink` null when an earlier, interrupted run had completed the upload. */
type Uploaded = { file: string } & Omit<StoredFile, 'deleteLink'> & { deleteLink: string | null };

/** One file's outcome, for --json. */
type UploadResult = Uploaded | { file: string; error: Record<string, unknown> };

/**
 * `filehaven upload`: each file streamed to the server (client.upload: resumable tus
 * when the server offers it, else POST /files; `--no-resume` forces POST), `--parallel`
 * at a time, a progress bar each at a terminal. A tus upload goes in PATCHes no larger
 * than the server's Filehaven-Max-Chunk-Size (or a smaller `--chunk-size`), so a proxy's
 * body limit below the file's size lets it through. A file of 64 MiB or more goes over
 * `--connections` connections at once (tus concatenation) where the server offers it.
 * A tus upload cut by Ctrl-C, a lost
 * connection or `kill -9` continues where it stopped when the same command runs again
 * (its URL is kept in `uploads.json` beside the login). With --folder, the folder is
 * checked before the first byte and the stored files are moved into it with one call at
 * the end.
 */
export async function uploadCommand(args: string[]): Promise<void> {
  await runUserCommand('upload', args, optionsFor('upload'), async (command) => {
    const paths = command.positionals;
    if (paths.length === 0) throw new UsageError('upload takes at least one FILE');
    const parallel = countFlag(command.values, 'parallel', RANGES.parallel);
    const folder = command.values.folder as string | undefined;
    const transport = command.values['no-resume'] === true ? 'post' : 'auto';
    // The server's Filehaven-Max-Chunk-Size caps it (the SDK reads it from the creation's answer).
    const chunkSize = sizeFlag(command.values, 'chunk-size', RANGES.chunkSize);
    if (chunkSize !== undefined && transport === 'post')
      throw new UsageError('--chunk-size is for resumable uploads; --no-resume sends each file in one request');
    const connections = countFlag(command.values, 'connections', RANGES.connections);
    if (command.values.connections !== undefined && transport === 'post')
      throw new UsageError('--connections is for resumable uploads; --no-resume sends each file in one request');
    if (folder !== undefined && !/^[A-Za-z0-9]+$/.test(folder)) throw new UsageError(`--folder expects a folder id, got "${folder}"`);
    const expiresIn = durationFlag(command.values, 'expires', RANGES.expires);
    // Every file must be readable before anything is sent: a typo fails fast.
    for (const file of paths) {
      const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
        throw new Error(`cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
      });
      if (!info.isFile()) throw new Error(`${file} is not a regular file`);
    }
    const client = await command.client();
    if (folder !== undefined) await client.folder(folder, { limit: 1 });

    const bars = transferBars(showProgress(command.json));
    const results: UploadResult[] = new Array(paths.length);
    let exitCode: number = EXIT.ok;
    // A refused key refuses every file, and an interruption ends the run: no file is
    // started after either, and the links of the files stored before are still printed
    // (a delete link is shown only once).
    let stopped = false;
    let next = 0;
    const worker = async () => {
      while (next < paths.length && !stopped && !command.signal.aborted) {
        const index = next++;
        const file = paths[index]!;
        let bar: ReturnType<typeof bars.add> | undefined;
        try {
          const size = (await stat(file)).size;
          bar = bars.add(path.basename(file), size);
          const stored = await client.upload(file, { transport, chunkSize, expiresIn, connections, onProgress: (sent) => bar!.update(sent) });
          results[index] = { file, ...stored, deleteLink: stored.deleteLink ?? null };
        } catch (error) {
          if (command.signal.aborted) return;
          results[index] = { file, error: errorJson(error) };
          exitCode = Math.max(exitCode, command.warn(error, file));
          if (error instanceof FilehavenApiError && error.status === 401) stopped = true;
        } finally {
          bar?.stop();
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(parallel, paths.length) }, worker));
    } finally {
      bars.stop();
    }
    if (command.signal.aborted) {
      command.warn(command.signal.reason);
      exitCode = EXIT.interrupted;
    }

    const stored = results.filter((result): result is Uploaded => result !== undefined && 'id' in result);
    let moved: string | null = null;
    if (folder !== undefined && stored.length > 0) {
      try {
        await client.move(
          stored.map((file) => file.id),
          folder,
        );
        moved = folder;
      } catch (error) {
        exitCode = Math.max(exitCode, command.warn(error, `uploaded, but not moved into ${folder}`));
      }
    }
    return {
      human: stored.map((file) => `${file.id}  ${file.downloadLink}${file.expires ? `  (expires ${file.expires} UTC)` : ''}`).join('\n'),
      json: { files: results, folder: moved },
      exitCode,
    };
  });
}
