import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { filesThroughApi, onPath, runTool, toolSkip } from '../helpers/dav-clients.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// Issue 27, "done when": rclone (Debian's package) with its webdav backend round-trips a
// tree byte-exact. A tree of 300 files in nested folders with Unicode names (accents,
// CJK, emoji, spaces, XML's own characters), empty files and one larger file goes up with
// `copy`, is compared byte by byte with `check --download`, then `sync` runs both ways
// after changes on each side (the remote ones through the API and through plain WebDAV
// requests), then `move` (server-side and from local), `delete` and `purge`. At the end,
// every file the API lists has the SHA-256 of the file rclone was given, and no other is
// there. The larger file is FILEHAVEN_DAV_BIG_MIB MiB (default 64; `npm run test:deep`
// sends 3 GiB, the issue's "file of several GiB").

const MiB = 1024 * 1024;
const BIG_MIB = Number(process.env.FILEHAVEN_DAV_BIG_MIB ?? 64);
if (!Number.isInteger(BIG_MIB) || BIG_MIB < 1)
  throw new Error(`FILEHAVEN_DAV_BIG_MIB: expected a whole number of MiB, got "${process.env.FILEHAVEN_DAV_BIG_MIB}"`);
const FILES = 300;
const GUARD = { timeout: 300_000 + BIG_MIB * 600 };

/** Folders of the tree; files are spread over them, the top included. */
const FOLDERS = [
  '',
  'docs',
  'docs/café crème',
  'docs/café crème/Ünïcödé Ελληνικά',
  'photos',
  'photos/日本語 フォルダ',
  'photos/日本語 フォルダ/深い/もっと深い',
  'emoji 😀🎉',
  'emoji 😀🎉/nested 🐘',
  "signs & 'quotes' + [brackets]",
  'spaces  twice and ñandú',
  'extra',
  'extra/inner',
];
const NAMES = ['file {i} ñandú.txt', '写真 {i}.bin', '{i} 🎵 song.dat', 'Ελληνικά {i}.txt', 'notes & {i} <1>.md', 'plain-{i}.log'];

let t: TestServer;
let ada: TestAccount;
let work: string;
let local: string;
const skip = toolSkip('rclone');

before(async () => {
  // The comparison reads every file through the API (its direct link, then its bytes):
  // hundreds of calls in seconds, past the API's rate per key, which is not under test here.
  t = await startTestServer({ apiRatePerKey: 0, apiRatePerIp: 0 });
  ada = await t.account({ premiumDays: 30, trafficBytes: (BIG_MIB * 6 + 512) * MiB });
  work = await mkdtemp(path.join(tmpdir(), 'filehaven-rclone-'));
  local = path.join(work, 'tree');
  // An empty configuration of its own: the remote comes from the environment alone.
  await writeFile(path.join(work, 'rclone.conf'), '');
});
after(async () => {
  await t?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** SHA-256 of every file under `root`, by its path relative to it ("/"-separated). */
async function localTree(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(full)) hash.update(chunk as Buffer);
    files.set(path.relative(root, full).split(path.sep).join('/'), hash.digest('hex'));
  }
  return files;
}

/** Where makeTree puts its file number `i` ("/"-separated, relative to the tree). */
function fileAt(i: number): string {
  return [FOLDERS[i % FOLDERS.length]!, NAMES[i % NAMES.length]!.replace('{i}', String(i))].filter(Boolean).join('/');
}

/** The tree: FILES small files (a few empty) spread over FOLDERS, and the larger one streamed to disk. */
async function makeTree(): Promise<void> {
  for (const folder of FOLDERS) await mkdir(path.join(local, folder), { recursive: true });
  for (let i = 0; i < FILES - 1; i++) {
    const size = i % 50 === 7 ? 0 : (i * 7919) % 40_000;
    await writeFile(path.join(local, fileAt(i)), randomBytes(size));
  }
  const big = createWriteStream(path.join(local, 'photos', 'big 大きい.bin'));
  for (let i = 0; i < BIG_MIB; i++) if (!big.write(randomBytes(MiB))) await new Promise<void>((resolve) => big.once('drain', () => resolve()));
  await new Promise<void>((resolve, reject) => big.end((error?: Error | null) => (error ? reject(error) : resolve())));
}

/**
 * rclone with the remote "fh:" on the account's tree (its URL, vendor and obscured key
 * from the environment), with rclone's own defaults (4 transfers, 8 checkers: as a user
 * runs it) but one try: a retry would hide a real error.
 */
async function rclone(...args: string[]): Promise<string> {
  const env = await rcloneEnv();
  const run = await runTool(onPath('rclone') ?? 'rclone', ['--retries', '1', '--low-level-retries', '1', ...args], {
    env,
  });
  assert.equal(run.code, 0, `rclone ${args.join(' ')} exited with ${run.code ?? run.signal}:\n${run.output}`);
  return run.output;
}

let envOnce: Promise<Record<string, string>> | undefined;
function rcloneEnv(): Promise<Record<string, string>> {
  envOnce ??= (async () => {
    const config = path.join(work, 'rclone.conf');
    const run = await runTool(onPath('rclone') ?? 'rclone', ['obscure', ada.key], { env: { RCLONE_CONFIG: config } });
    assert.equal(run.code, 0, `rclone obscure: ${run.output}`);
    return {
      RCLONE_CONFIG: config,
      RCLONE_CONFIG_FH_TYPE: 'webdav',
      RCLONE_CONFIG_FH_URL: `${t.url}/dav/`,
      RCLONE_CONFIG_FH_VENDOR: 'other',
      RCLONE_CONFIG_FH_USER: ada.login,
      RCLONE_CONFIG_FH_PASS: run.output.trim(),
    };
  })();
  return envOnce;
}

/** `rclone check --download` of the local tree against the remote's: identical, byte for byte. */
async function checkSame(localDir: string, remote: string): Promise<void> {
  const output = await rclone('check', '--download', localDir, remote);
  assert.match(output, / 0 differences found/, output);
}

/** The API's view of the account equals `expected`, path by path and hash by hash. */
async function assertApiHas(expected: Map<string, string>): Promise<void> {
  const seen = await filesThroughApi(t.url, ada.key);
  assert.deepEqual([...seen.entries()].sort(), [...expected.entries()].sort());
}

function renamePrefix(model: Map<string, string>, from: string, to: string): void {
  for (const [key, hash] of [...model]) {
    if (!key.startsWith(`${from}/`)) continue;
    model.delete(key);
    model.set(`${to}/${key.slice(from.length + 1)}`, hash);
  }
}

const davAuth = () => `Basic ${Buffer.from(`${ada.login}:${ada.key}`).toString('base64')}`;
const davUrl = (where: string) => `${t.url}/dav/${where.split('/').map(encodeURIComponent).join('/')}`;

test('rclone copy, check --download, sync both ways, move, delete and purge round-trip the tree byte-exact', { skip, ...GUARD }, async () => {
  assert.ok(onPath('rclone'), 'CI=true: rclone must be installed (.ci/run installs it: apt-get install rclone)');
  await makeTree();
  assert.equal((await localTree(local)).size, FILES);

  // Up, then compared byte by byte (rclone's webdav "other" vendor has no hashes: --download).
  await rclone('copy', local, 'fh:');
  await checkSame(local, 'fh:');

  // Local changes, then sync up: a changed file (new size), a new file and an empty one,
  // a file and a whole folder gone.
  await writeFile(path.join(local, fileAt(1)), randomBytes(123_457));
  await writeFile(path.join(local, 'docs', 'café crème', 'nouveau fichier ✓.txt'), 'bonjour');
  await writeFile(path.join(local, 'emoji 😀🎉', 'empty again 🫙.txt'), '');
  await rm(path.join(local, fileAt(5)));
  await rm(path.join(local, 'spaces  twice and ñandú'), { recursive: true });
  await rclone('sync', local, 'fh:');
  await checkSame(local, 'fh:');

  // Remote changes, then sync down: a file uploaded through the API (at the top), one
  // replaced and one deleted with plain WebDAV requests.
  const fromApi = randomBytes(2048);
  assert.equal((await t.upload(ada.key, 'from the API 🌐.bin', fromApi)).response.status, 201);
  const replaced = randomBytes(99_991);
  const put = await fetch(davUrl(fileAt(43)), { method: 'PUT', headers: { Authorization: davAuth() }, body: replaced });
  assert.ok(put.status === 201 || put.status === 204, `PUT answered ${put.status}`);
  const removed = await fetch(davUrl(fileAt(27)), { method: 'DELETE', headers: { Authorization: davAuth() } });
  assert.equal(removed.status, 204);
  await rclone('sync', 'fh:', local);
  await checkSame(local, 'fh:');
  const synced = await localTree(local);
  const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  assert.equal(synced.get('from the API 🌐.bin'), sha(fromApi));
  assert.equal(synced.get(fileAt(43)), sha(replaced));
  assert.equal(synced.has(fileAt(27)), false);

  // move: on the server (a WebDAV MOVE of a folder), and from local (uploaded, then removed here).
  const model = new Map(synced);
  await rclone('move', 'fh:docs', 'fh:archive/2026/docs');
  renamePrefix(model, 'docs', 'archive/2026/docs');
  await rclone('move', path.join(local, 'extra'), 'fh:extra moved');
  for (const [key, hash] of synced) if (key.startsWith('extra/')) model.set(`extra moved/${key.slice('extra/'.length)}`, hash);
  assert.deepEqual(await localTree(path.join(local, 'extra')), new Map(), 'rclone move took the local files');

  // delete: files only, by pattern; purge: a folder and everything in it.
  await rclone('delete', 'fh:photos', '--filter', '- big*', '--filter', '+ *.bin', '--filter', '- *');
  for (const key of [...model.keys()]) if (key.startsWith('photos/') && key.endsWith('.bin') && !key.includes('/big ')) model.delete(key);
  await rclone('purge', 'fh:emoji 😀🎉');
  for (const key of [...model.keys()]) if (key.startsWith('emoji 😀🎉/')) model.delete(key);
  await rclone('purge', 'fh:extra');
  for (const key of [...model.keys()]) if (key.startsWith('extra/')) model.delete(key);

  // What the API holds is exactly the model, byte for byte; the big file among it.
  assert.ok(model.has('photos/big 大きい.bin'));
  assert.equal((await stat(path.join(local, 'photos', 'big 大きい.bin'))).size, BIG_MIB * MiB);
  await assertApiHas(model);
  const listed = (await rclone('lsf', '-R', '--files-only', 'fh:')).trim().split('\n').filter(Boolean);
  assert.deepEqual(listed.sort(), [...model.keys()].sort());
});
