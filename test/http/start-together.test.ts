import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { freshBackend, settingsEnv, TEST_BACKEND } from '../helpers/backend.js';
import { ServerProcess } from '../helpers/server-process.js';

/**
 * Servers started at the same moment on an empty database (issue 10): one migrates it,
 * the others wait for that and come up on the result; one creates the operator account
 * and shows its password; all of them then serve the same site. On SQLite they share one
 * data folder; on PostgreSQL + S3 each has its own, with the secret given to all.
 */
const SERVERS = 3;

test(`${SERVERS} servers started together on an empty database all come up, migrated once, one operator`, async () => {
  const backend = await freshBackend();
  const folders: string[] = [];
  const servers: ServerProcess[] = [];
  try {
    const shared = TEST_BACKEND === 'sqlite-local' ? await mkdtemp(path.join(tmpdir(), 'filehaven-together-')) : null;
    if (shared) folders.push(shared);
    for (let i = 0; i < SERVERS; i++) if (!shared) folders.push(await mkdtemp(path.join(tmpdir(), 'filehaven-together-')));
    const env = { ...settingsEnv(backend.config), ...(shared ? {} : { FILEHAVEN_SECRET: randomBytes(32).toString('base64url') }) };
    const started = await Promise.allSettled(
      Array.from({ length: SERVERS }, (_, i) => ServerProcess.start(shared ?? folders[i]!, ['--log-level', 'warn'], 60_000, env)),
    );
    for (const outcome of started) if (outcome.status === 'fulfilled') servers.push(outcome.value);
    const failures = started.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
    assert.deepEqual(failures, [], 'every server came up');

    const passwords = servers.flatMap((server) => [...server.log.matchAll(/password: (\S+)/g)].map((match) => match[1]!));
    assert.equal(passwords.length, 1, `one server created the operator and showed its password:\n${servers.map((s) => s.log).join('\n---\n')}`);

    // A key made on one server opens the account on every server.
    const made = await fetch(`${servers[0]!.url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'admin', password: passwords[0]! }) });
    const key: string | undefined = /<content type="text">([^<]+)</.exec(await made.text())?.[1];
    assert.ok(key, `a key (${made.status})`);
    for (const server of servers) {
      const answer: Response = await fetch(`${server.url}/account`, { headers: { Authorization: key } });
      assert.equal(answer.status, 200, `GET /account on ${server.url}`);
      assert.match(await answer.text(), /<ed:name>Operator<\/ed:name>/);
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await backend.remove();
    await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
  }
});
