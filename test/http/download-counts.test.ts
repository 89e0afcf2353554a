import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { freshBackend, settingsEnv, TEST_BACKEND } from '../helpers/backend.js';
import { runCli } from '../helpers/cli.js';
import { ServerProcess } from '../helpers/server-process.js';

/**
 * Download counts are taken in memory and written in batches (issue 28): on two servers
 * of one site, N downloads at once still end with exactly N counted and every byte sent
 * counted once, written at the latest when the servers stop gracefully (SIGTERM). The
 * flush interval (1 s) is not waited for: the servers stop right after the last answer,
 * so what they still held must be written by the stop.
 */
const DOWNLOADS = 60;
const SIZE = 4096;

test(`${DOWNLOADS} downloads at once on two servers: exactly ${DOWNLOADS} counted, all bytes served, once the servers stop`, async () => {
  const backend = await freshBackend();
  const folders: string[] = [];
  const servers: ServerProcess[] = [];
  try {
    const shared = TEST_BACKEND === 'sqlite-local' ? await mkdtemp(path.join(tmpdir(), 'filehaven-counts-')) : null;
    if (shared) folders.push(shared);
    else for (let i = 0; i < 2; i++) folders.push(await mkdtemp(path.join(tmpdir(), 'filehaven-counts-')));
    const env = { ...settingsEnv(backend.config), ...(shared ? {} : { FILEHAVEN_SECRET: randomBytes(32).toString('base64url') }) };
    // One after the other: the first migrates and creates the operator.
    const args = ['--log-level', 'warn', '--free-downloads-per-ip', '0'];
    servers.push(await ServerProcess.start(shared ?? folders[0]!, args, 60_000, env));
    servers.push(await ServerProcess.start(shared ?? folders[1]!, args, 60_000, env));
    const password = /password: (\S+)/.exec(servers[0]!.log)?.[1];
    assert.ok(password, servers[0]!.log);
    const made = await fetch(`${servers[0]!.url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'admin', password }) });
    const key = /<content type="text">([^<]+)</.exec(await made.text())?.[1];
    assert.ok(key, `a key (${made.status})`);

    const content = randomBytes(SIZE);
    const form = new FormData();
    form.append('upload', new Blob([new Uint8Array(content)]), 'counted.bin');
    const uploaded = await fetch(`${servers[0]!.url}/files`, { method: 'POST', headers: { Authorization: key }, body: form });
    const body = await uploaded.text();
    assert.equal(uploaded.status, 201, body);
    const link = new URL(/title="download_link" href="([^"]+)"/.exec(body)![1]!.replace(/&amp;/g, '&'));

    const answers = await Promise.all(
      Array.from({ length: DOWNLOADS }, async (_, i) => {
        const url = new URL(`${link.pathname}?download=1`, servers[i % 2]!.url);
        const response = await fetch(url);
        return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
      }),
    );
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.ok(answer.bytes.equals(content), 'every byte right');
    }

    const exits = await Promise.all(servers.splice(0).map((server) => server.stop()));
    assert.deepEqual(exits, [
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
    const stats = await runCli(['stats', '--json', '--data', shared ?? folders[0]!], env);
    assert.equal(stats.code, 0, stats.stderr);
    const { downloads, bytesServed } = JSON.parse(stats.stdout) as { downloads: number; bytesServed: number };
    assert.equal(downloads, DOWNLOADS, 'every download start counted once, across both servers');
    assert.equal(bytesServed, DOWNLOADS * SIZE, 'every byte served counted once');
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await backend.remove();
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  }
});
