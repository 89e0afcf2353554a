import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { ServerProcess } from '../helpers/server-process.js';

// Issue 14: what filehaven creates in the data folder is its owner's only (the folder 0700,
// the secret and the database with its -wal and -shm 0600), whatever the umask; a folder
// the operator made keeps its mode; a kept `secret` that group or others may read is used,
// with one warning that names the file and the fix, and never shows the secret.

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;
const octal = (mode: number) => `0${mode.toString(8)}`;
const count = (text: string, part: string) => text.split(part).length - 1;

/**
 * `filehaven serve` on `dataDir`, spawned under `umask` (the child inherits it; the spawn
 * happens before ServerProcess.start first awaits, so the test process's umask is back at once).
 */
async function serveWithUmask(dataDir: string, umask: number): Promise<ServerProcess> {
  const previous = process.umask(umask);
  let started: Promise<ServerProcess>;
  try {
    started = ServerProcess.start(dataDir);
  } finally {
    process.umask(previous);
  }
  return started;
}

/** A few requests that read and write the database: a start's first requests. */
async function firstRequests(url: string): Promise<void> {
  assert.equal((await fetch(`${url}/healthz`)).status, 200);
  assert.equal((await fetch(`${url}/`)).status, 200);
  const refused = await fetch(`${url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'nobody', password: 'wrong password' }) });
  assert.equal(refused.status, 401);
  assert.equal((await fetch(`${url}/account`, { headers: { Authorization: 'X'.repeat(32) } })).status, 401);
}

describe('data folder modes', { concurrency: 1, timeout: 120_000, skip: process.platform === 'win32' ? 'POSIX modes only' : false }, () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'filehaven-modes-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  test('a fresh start under umask 000 makes the folder 0700, the secret and the database files 0600, and warns of nothing', async () => {
    const dataDir = path.join(root, 'made', 'site');
    const server = await serveWithUmask(dataDir, 0o000);
    try {
      await firstRequests(server.url);
      assert.equal(octal(await modeOf(dataDir)), '0700', 'the data folder');
      for (const name of ['secret', 'filehaven.db', 'filehaven.db-wal', 'filehaven.db-shm']) {
        // -wal and -shm exist while the server holds the database open (WAL mode).
        assert.ok(existsSync(path.join(dataDir, name)), `${name} exists`);
        assert.equal(octal(await modeOf(path.join(dataDir, name))), '0600', name);
      }
      assert.doesNotMatch(server.log, /chmod|warning/i);
    } finally {
      await server.stop();
    }
  });

  test('a data folder the operator made keeps its mode; what filehaven creates in it is still 0600', async () => {
    const dataDir = path.join(root, 'operator');
    await mkdir(dataDir);
    await chmod(dataDir, 0o750);
    const server = await serveWithUmask(dataDir, 0o022);
    try {
      await firstRequests(server.url);
      assert.equal(octal(await modeOf(dataDir)), '0750');
      for (const name of ['secret', 'filehaven.db']) assert.equal(octal(await modeOf(path.join(dataDir, name))), '0600', name);
    } finally {
      await server.stop();
    }
  });

  test('a secret file group or others may read: the start warns once, with the path and the fix, never the secret', async () => {
    const dataDir = path.join(root, 'loose');
    const first = await ServerProcess.start(dataDir);
    await first.stop();
    const file = path.join(dataDir, 'secret');
    const secret = (await readFile(file, 'utf8')).trim();
    await chmod(file, 0o644);

    const server = await ServerProcess.start(dataDir);
    try {
      // The server works with the secret as before; two rounds of requests add no second warning.
      await firstRequests(server.url);
      await firstRequests(server.url);
    } finally {
      await server.stop();
    }
    const fix = `chmod 600 ${file}`;
    assert.equal(count(server.log, fix), 1, `one warning with "${fix}":\n${server.log}`);
    assert.match(
      server.log,
      new RegExp(`warning: the server secret ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is open to group or others \\(mode 0644\\)`),
    );
    assert.ok(!server.log.includes(secret), 'the secret is not printed');
    assert.equal(octal(await modeOf(file)), '0644', 'the operator fixes the mode, filehaven does not change it behind their back');

    // A CLI command reads the same secret: one warning on stderr, and the command still works.
    await chmod(file, 0o640);
    const stats = await runCli(['stats', '--data', dataDir]);
    assert.equal(stats.code, 0, stats.stderr);
    assert.equal(count(stats.stderr, fix), 1, stats.stderr);
    assert.match(stats.stderr, /\(mode 0640\)/);
    assert.ok(!stats.stderr.includes(secret) && !stats.stdout.includes(secret), 'the secret is not printed');

    // After the fix: silence.
    await chmod(file, 0o600);
    const fixed = await runCli(['stats', '--data', dataDir]);
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.equal(fixed.stderr, '');
  });
});
