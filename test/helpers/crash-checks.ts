import { createHash } from 'node:crypto';
import { createReadStream, type Dirent } from 'node:fs';
import { readdir, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { download, errorCodeOf, type ListedFile, parseFileList, request } from './crash-http.js';
import type { ClientAccount, CrashModel, TrackedFile, UnknownCreation } from './crash-model.js';

const SHA256_NAME = /^[0-9a-f]{64}$/;

async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** Every file under `dir`, recursively; none when it does not exist. */
async function walk(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const found: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await walk(full)));
    else found.push(full);
  }
  return found;
}

/**
 * The blob files of a data folder, each hashed (once: a file seen before with the same
 * inode, size and modification time is not read again). Any file whose content is not
 * the digest it is named by is a partial blob, reported to the model.
 */
export class BlobScanner {
  private readonly verified = new Map<string, string>();

  constructor(
    private readonly dataDir: string,
    private readonly model: CrashModel,
  ) {}

  /** The digests of the whole, well-named blob files now on disk. */
  async scan(when: string): Promise<Set<string>> {
    const digests = new Set<string>();
    for (const file of await walk(path.join(this.dataDir, 'blobs'))) {
      const name = path.basename(file);
      const info = await stat(file).catch(() => null);
      if (!info) continue;
      if (!SHA256_NAME.test(name)) {
        this.model.violation('partial', `${when}: ${path.relative(this.dataDir, file)} in blobs/ is not named by a digest`);
        continue;
      }
      const key = `${file}:${info.ino}:${info.size}:${info.mtimeMs}`;
      let digest = this.verified.get(key);
      if (digest === undefined) {
        digest = await sha256OfFile(file);
        if (digest === name) this.verified.set(key, digest);
      }
      if (digest !== name) this.model.violation('partial', `${when}: blob ${name} holds ${info.size} bytes whose SHA-256 is ${digest}`);
      else digests.add(name);
    }
    return digests;
  }
}

/** The temp files of unfinished uploads. */
export async function tempFiles(dataDir: string): Promise<string[]> {
  return walk(path.join(dataDir, 'tmp'));
}

/**
 * Sets every blob and temp file's modification time `ms` into the past, so that a gc with
 * the shortest grace the config allows (1 minute) considers all of them: an orphan left
 * by the last kill is then collected instead of being spared as possibly an upload in
 * progress, and a live blob old enough to be collected must be recognised as live.
 */
export async function ageStorage(dataDir: string, ms: number): Promise<void> {
  const then = new Date(Date.now() - ms);
  for (const file of [...(await walk(path.join(dataDir, 'blobs'))), ...(await tempFiles(dataDir))]) await utimes(file, then, then);
}

/** Every file of an account through GET /files, page by page. */
export async function listAllFiles(url: string, key: string): Promise<ListedFile[]> {
  const files: ListedFile[] = [];
  let next: string | null = '/files?limit=500';
  while (next) {
    const outcome = await request(new URL(next, url).toString(), { headers: { Authorization: key } });
    if (outcome.kind !== 'answer' || outcome.status !== 200) throw new Error(`GET ${next}: ${JSON.stringify(outcome).slice(0, 300)}`);
    const page = parseFileList(outcome.body);
    files.push(...page.files);
    next = page.next;
  }
  return files;
}

/** Runs `work` over `items`, `width` at a time. */
async function each<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** What the final verification found live. */
export interface LiveState {
  /** Every live file of the workload's accounts. */
  files: number;
  /** Their distinct digests (what was sent, whether or not the download worked). */
  digests: Set<string>;
  /** Unanswered uploads and copies that turned out done (whole), and not done. */
  unknownDone: number;
  unknownNotDone: number;
}

/**
 * The end state, through the API of a freshly started server, against the model: every
 * acknowledged file present with its bytes and in its folder, every acknowledged delete
 * gone, every unanswered operation all or nothing, no file nobody made, every move's
 * files together, every folder listing agreeing with the file list.
 */
export async function verifyEndState(model: CrashModel, clients: ClientAccount[], url: string): Promise<LiveState> {
  const live: LiveState = { files: 0, digests: new Set(), unknownDone: 0, unknownNotDone: 0 };
  const downloads: Array<{ listed: ListedFile; sha256: string; size: number; tracked?: TrackedFile }> = [];
  const tracked = [...model.files.values()];

  for (const client of clients) {
    const listed = await listAllFiles(url, client.key);
    live.files += listed.length;
    const byId = new Map(listed.map((file) => [file.id, file]));
    const mine = tracked.filter((file) => file.owner === client.index);

    for (const file of mine) {
      const found = byId.get(file.id);
      if (found) {
        byId.delete(file.id);
        if (!model.mayBePresent(file)) model.violation('undeleted', `${file.id} (delete acknowledged) is listed`);
        const folders = file.states.flatMap((state) => (state.present ? [state.folder] : []));
        if (!folders.includes(found.folder)) {
          model.violation('wrongFolder', `${file.id} is in ${found.folder ?? 'the top'}, expected ${folders.map((f) => f ?? 'the top').join(' or ')}`);
        }
        if (found.size !== file.size || found.status !== 'A')
          model.violation('corrupt', `${file.id} is listed with size ${found.size} status ${found.status}, sent ${file.size}`);
        downloads.push({ listed: found, sha256: file.sha256, size: file.size, tracked: file });
      } else if (!model.mayBeGone(file)) {
        model.violation('lost', `${file.id} (${file.origin} acknowledged, ${file.size} bytes) is not listed`);
      }
    }

    // What is left must be unanswered uploads or copies of this account, each at most once.
    const candidates = model.unknownCreations.filter((creation) => creation.owner === client.index);
    const used = new Set<UnknownCreation>();
    for (const file of byId.values()) {
      const creation = candidates.find((c) => !used.has(c) && c.name === file.name && c.size === file.size);
      if (!creation) {
        model.violation('phantom', `${file.id} "${file.name}" (${file.size} bytes) of client ${client.index}: no operation made it`);
        continue;
      }
      used.add(creation);
      downloads.push({ listed: file, sha256: creation.sha256, size: creation.size });
    }
    live.unknownDone += used.size;
    live.unknownNotDone += candidates.length - used.size;

    // Every folder's own listing agrees with the file list.
    for (const folder of client.folders) {
      const inFolder = new Set<string>();
      let count = NaN;
      for (let next: string | null = `/folders/${folder}?limit=500`; next; ) {
        const outcome = await request(new URL(next, url).toString(), { headers: { Authorization: client.key } });
        if (outcome.kind !== 'answer' || outcome.status !== 200) {
          model.violation('lost', `GET ${next} (folder created, acknowledged): ${outcome.kind === 'answer' ? outcome.status : outcome.kind}`);
          break;
        }
        for (const match of outcome.body.matchAll(/<ed:file id="([^"]+)"/g)) inFolder.add(match[1]!);
        if (Number.isNaN(count)) count = Number(/<ed:files>(\d+)<\/ed:files>/.exec(outcome.body)?.[1]);
        next = parseFileList(outcome.body).next;
      }
      const expected = new Set(listed.filter((file) => file.folder === folder).map((file) => file.id));
      if (count !== expected.size || inFolder.size !== expected.size || [...expected].some((id) => !inFolder.has(id))) {
        model.violation(
          'wrongFolder',
          `GET /folders/${folder} shows ${count} files (${[...inFolder].join(',')}), GET /files ${expected.size} (${[...expected].join(',')})`,
        );
      }
    }
  }

  // An unanswered move moved all of its files or none.
  for (const move of model.unknownMoves) {
    const ids = [...move.from.keys()];
    const moved = ids.filter((id) => downloads.some((d) => d.listed.id === id && d.listed.folder === move.to)).length;
    if (moved !== 0 && moved !== ids.length)
      model.violation('partial', `a move of ${ids.join(',')} to ${move.to} with no answer moved ${moved} of ${ids.length}`);
  }

  // A copy or direct link answered 404: the file was deleted, with or without an answer.
  for (const id of model.reportedGone) {
    const file = model.files.get(id);
    if (file && !model.mayBeGone(file)) model.violation('lost', `${id} answered errorFileNotFound during the workload, but no delete of it was sent`);
  }

  // Acknowledged deletes: 404 errorFileNotFound for the details too.
  const deleted = tracked.filter((file) => !model.mayBePresent(file));
  await each(deleted, 4, async (file) => {
    const owner = clients[file.owner]!;
    const outcome = await request(`${url}/files/${file.id}`, { headers: { Authorization: owner.key } });
    if (outcome.kind !== 'answer' || outcome.status !== 404 || errorCodeOf(outcome.body) !== 'errorFileNotFound') {
      model.violation(
        'undeleted',
        `GET /files/${file.id} after an acknowledged delete: ${outcome.kind === 'answer' ? `${outcome.status} ${errorCodeOf(outcome.body)}` : outcome.kind}`,
      );
    }
  });

  // Every listed file downloads whole, with the bytes that were sent.
  await each(downloads, 4, async ({ listed, sha256, size, tracked }) => {
    live.digests.add(sha256);
    const got = await download(`${listed.downloadLink}?download=1`);
    if (!got.complete) {
      const status = got.outcome.kind === 'answer' ? `${got.outcome.status} ${errorCodeOf(got.outcome.body)}` : got.outcome.kind;
      if (tracked && model.mayBeGone(tracked)) {
        // The one operation with no answer on this file was its DELETE: it took the bytes
        // and left the file (the unlink ran, the COMMIT did not).
        model.violation('partial', `${listed.id} "${listed.name}": a DELETE cut by a kill removed its bytes but not the file: listed, download ${status}`);
      } else {
        model.violation('lost', `${listed.id} "${listed.name}" is listed but its download fails: ${status}`);
      }
    } else if (got.received !== size || got.sha256 !== sha256) {
      model.violation(
        'corrupt',
        `${listed.id} "${listed.name}": downloaded ${got.received} bytes with SHA-256 ${got.sha256}, sent ${size} bytes with ${sha256}`,
      );
    }
  });
  return live;
}

/** Whether a tracked file must be present at the end: its bytes must never leave the disk. */
export function mustBePresent(model: CrashModel, file: TrackedFile): boolean {
  return !model.mayBeGone(file);
}
