import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { redactUrl } from '../../src/http/log-redaction.js';
import { type FreshBackend, freshBackend, settingsEnv } from '../helpers/backend.js';
import { assertOk, cleanEnv, filehavenEntry, runCli } from '../helpers/cli.js';

const BIN = filehavenEntry();

describe('redactUrl', () => {
  const cases: Array<[string, string]> = [
    ['/account?apikey=K1&limit=5', '/account?apikey=[redacted]&limit=5'],
    ['/apikeys?login=ada&password=hunter2&pass=x', '/apikeys?login=[redacted]&password=[redacted]&pass=[redacted]'],
    ['/files?status=A&cursor=abc', '/files?status=A&cursor=abc'],
    ['/accounts/profile/misc?key=new', '/accounts/profile/misc?key=new'],
    ['/accounts/profile/misc?key=K9secret', '/accounts/profile/misc?key=[redacted]'],
    ['/ABCDEFGHIJ/delete/0123abcd', '/ABCDEFGHIJ/delete/[redacted]'],
    ['/direct/ABCDEFGHIJ/tok.en/name.txt?download=1', '/direct/ABCDEFGHIJ/[redacted]/name.txt?download=1'],
    ['/x?%70assword=y', '/x?%70assword=[redacted]'],
    ['/x?bad=%ZZ', '/x?bad=[redacted]'],
    ['/plain', '/plain'],
    ['/ABCDEFGHIJ/%64elete/0123abcd', '/ABCDEFGHIJ/%64elete/[redacted]'],
    ['//ABCDEFGHIJ/delete/0123abcd', '/ABCDEFGHIJ/delete/[redacted]'],
    ['http://example.org/ABCDEFGHIJ/delete/0123abcd?x=1', '/ABCDEFGHIJ/delete/[redacted]?x=[redacted]'],
    ['/%64irect/ABCDEFGHIJ/tok/name', '/%64irect/ABCDEFGHIJ/[redacted]/name'],
    ['/account?K1secretkey', '/account?[redacted]'],
    ['/X/n.txt?download', '/X/n.txt?download'],
    // An upload request's id is its link's key (issue 25).
    ['/r/Xq3Lr8Tz2Wm9Kc4Vb7Na1D', '/r/[redacted]'],
    ['/r/Xq3Lr8Tz2Wm9Kc4Vb7Na1D/password', '/r/[redacted]/password'],
    ['/requests/Xq3Lr8Tz2Wm9Kc4Vb7Na1D', '/requests/[redacted]'],
    ['/requests?limit=2', '/requests?limit=2'],
    ['/s/Xq3Lr8Tz2Wm9Kc4Vb7Na1D', '/s/[redacted]'],
    ['/s/Xq3Lr8Tz2Wm9Kc4Vb7Na1D/download/K7Q2M9X4PA', '/s/[redacted]/download/K7Q2M9X4PA'],
    ['/s/Xq3Lr8Tz2Wm9Kc4Vb7Na1D?password=hunter2', '/s/[redacted]?password=[redacted]'],
    ['/shares/Xq3Lr8Tz2Wm9Kc4Vb7Na1D', '/shares/[redacted]'],
    ['/shares?cursor=abc', '/shares?cursor=abc'],
    ['/my/shares/share/Xq3Lr8Tz2Wm9Kc4Vb7Na1D', '/my/shares/share/[redacted]'],
    ['/my/shares/share/Xq3Lr8Tz2Wm9Kc4Vb7Na1D/revoke', '/my/shares/share/[redacted]/revoke'],
    ['/my/shares/request/Xq3Lr8Tz2Wm9Kc4Vb7Na1D/close', '/my/shares/request/[redacted]/close'],
    ['/my/shares?created=Xq3Lr8Tz2Wm9Kc4Vb7Na1D', '/my/shares?created=[redacted]'],
    ['/console/shares/Xq3Lr8Tz2Wm9Kc4Vb7Na1D/revoke', '/console/shares/[redacted]/revoke'],
    ['/console/requests/Xq3Lr8Tz2Wm9Kc4Vb7Na1D/close', '/console/requests/[redacted]/close'],
  ];
  for (const [url, expected] of cases) it(`${url} → ${expected}`, () => assert.equal(redactUrl(url), expected));
});

/**
 * The request log of a real server process (issue 7, item 5): a key, a password, a delete
 * secret or a direct-link token sent in a URL never appears in it.
 */
describe('request log', () => {
  let dataDir: string;
  let backend: FreshBackend;
  let child: ChildProcess;
  let log = '';
  let base = '';
  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-log-'));
    backend = await freshBackend();
    const env = settingsEnv(backend.config);
    child = spawn(process.execPath, [BIN, 'serve', '--data', dataDir, '--port', '0', '--log-level', 'info'], {
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    for (let i = 0; i < 200 && !base; i++) {
      base = /listening on (http:\/\/[^\s]+)/.exec(log)?.[1] ?? '';
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(base, `the server started: ${log}`);
    // Once serve has set the site up: the operator commands refuse a folder that is not a site's.
    assertOk(
      await runCli(
        ['accounts', 'create', '--data', dataDir, '--login', 'ada', '--password', 'correct horse', '--premium-days', '30', '--traffic', '1GiB'],
        env,
      ),
    );
  });
  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await backend?.remove();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('holds no key, password, delete secret or direct-link token', async () => {
    const password = 'correct horse';
    const keyBody = await (await fetch(`${base}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'ada', password }) })).text();
    const key = /<content type="text">([^<]+)</.exec(keyBody)?.[1] ?? '';
    assert.ok(key);
    // A password in the query string is refused, but the attempt still reaches the log.
    await fetch(`${base}/apikeys?login=ada&password=${encodeURIComponent(password)}`, { method: 'POST' });
    await fetch(`${base}/account?apikey=${key}`);
    const form = new FormData();
    form.append('upload', new Blob(['secret-free bytes']), 'a.txt');
    const upload = await (await fetch(`${base}/files?key=${key}`, { method: 'POST', headers: { Authorization: key }, body: form })).text();
    const deleteLink = /title="delete_link" href="([^"]+)"/.exec(upload)?.[1] ?? '';
    const id = /<entry>\s*<id>([^<]+)</.exec(upload)?.[1] ?? '';
    const deleteSecret = deleteLink.split('/').at(-1)!;
    assert.ok(deleteSecret.length > 10);
    const info = await (await fetch(`${base}/files/${id};DirectLink`, { headers: { Authorization: key } })).text();
    const direct = /href="([^"]*\/direct\/[^"]+)"/.exec(info)?.[1] ?? '';
    const token = new URL(direct).pathname.split('/')[3]!;
    assert.ok(token.length > 10, info);
    await (await fetch(direct, { headers: { Authorization: key } })).arrayBuffer();
    // The router takes these forms of a delete link too; the secret stays out of the log either way.
    const deletePath = new URL(deleteLink).pathname;
    await (await fetch(`${base}${deletePath.replace('/delete/', '/%64elete/')}`)).text();
    await (await fetch(`${base}/${deletePath}`)).text();
    await (await fetch(deleteLink)).text();

    // Nine requests above: wait until pino has written the completion of each.
    for (let i = 0; i < 100 && (log.match(/request completed/g) ?? []).length < 9; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.match(log, /"url":"\/account\?apikey=\[redacted\]"/, 'the request is logged, redacted');
    for (const [what, secret] of [
      ['API key', key],
      ['password', encodeURIComponent(password)],
      ['delete secret', deleteSecret],
      ['direct token', token],
    ] as const) {
      assert.ok(!log.includes(secret), `the log holds the ${what}`);
    }
  });
});
