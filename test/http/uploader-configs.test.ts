import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Browser } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The uploader configurations the profile hands out (ShareX .sxcu, a curl script for
// Flameshot and shells), with the account's key filled in; both used for real here.

const SHAREX = '/accounts/profile/misc/uploaders/sharex';
const SCRIPT = '/accounts/profile/misc/uploaders/curl';
let t: TestServer;
let dir: string;

before(async () => {
  t = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), 'filehaven-uploaders-'));
});
after(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

async function signedIn() {
  const user = await t.account();
  const browser = new Browser(t.url);
  assert.equal((await browser.signIn(user.login, user.password)).status, 303);
  return { user, browser };
}

/** ShareX's `{regex:pattern|group}` as a JavaScript RegExp (the patterns use nothing .NET reads differently). */
function sharexExtract(expression: string, response: string): string | undefined {
  const match = /^\{regex:(.*)\|(\d+)\}$/.exec(expression);
  assert.ok(match, expression);
  return new RegExp(match[1]!).exec(response)?.[Number(match[2])];
}

function run(command: string, args: string[], input?: Buffer): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      args,
      { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', FILEHAVEN_CLIPBOARD: 'no' } },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

describe('uploader configurations', () => {
  test('signed out: sign in first, and come back here', async () => {
    for (const where of [SHAREX, SCRIPT]) {
      const page = await new Browser(t.url).get(where);
      assert.equal(page.status, 303);
      assert.equal(page.response.headers.get('location'), `/signin?next=${encodeURIComponent(where)}`);
    }
  });

  test('the profile links both', async () => {
    const { browser } = await signedIn();
    const body = (await browser.get('/accounts/profile/misc')).body;
    assert.ok(body.includes(`<a class="button secondary" href="${SHAREX}" download>ShareX (.sxcu)</a>`), body);
    assert.ok(body.includes(`<a class="button secondary" href="${SCRIPT}" download>curl script (.sh)</a>`), body);
  });

  test('ShareX: an attachment no cache keeps, whose request and regexes work against the real API', async () => {
    const { user, browser } = await signedIn();
    const page = await browser.get(SHAREX);
    assert.equal(page.status, 200);
    assert.equal(page.response.headers.get('cache-control'), 'no-store');
    assert.match(page.response.headers.get('content-disposition') ?? '', /^attachment; filename="filehaven 127\.0\.0\.1-\d+\.sxcu"$/);
    const config = JSON.parse(page.body) as Record<string, unknown> & { Headers: Record<string, string> };
    assert.equal(config.RequestMethod, 'POST');
    assert.equal(config.RequestURL, `${t.url}/files`);
    assert.equal(config.Body, 'MultipartFormData');
    assert.equal(config.Headers.Authorization, user.key);

    // What ShareX sends: the file as the part FileFormName, the configured headers.
    const form = new FormData();
    form.append(String(config.FileFormName), new Blob(['a screenshot']), 'Screenshot 2026-11-21.png');
    const response = await fetch(String(config.RequestURL), { method: 'POST', headers: config.Headers, body: form });
    const answer = await response.text();
    assert.equal(response.status, 201, answer);
    const url = sharexExtract(String(config.URL), answer);
    assert.match(url ?? '', new RegExp(`^${t.url}/[A-Z0-9]{10}/Screenshot%202026-11-21\\.png$`));
    assert.equal(await (await fetch(`${url}?download=1`)).text(), 'a screenshot');
    assert.match(sharexExtract(String(config.DeletionURL), answer) ?? '', new RegExp(`^${t.url}/[A-Z0-9]{10}/delete/`));

    const refused = await fetch(String(config.RequestURL), { method: 'POST', headers: { ...config.Headers, Authorization: 'x'.repeat(32) }, body: form });
    assert.equal(sharexExtract(String(config.ErrorMessage), await refused.text()), 'Wrong apikey');
  });

  test('curl script: uploads files with awkward names and standard input, prints the links', async () => {
    const { user, browser } = await signedIn();
    const page = await browser.get(SCRIPT);
    assert.equal(page.status, 200);
    assert.equal(page.response.headers.get('cache-control'), 'no-store');
    assert.match(page.response.headers.get('content-disposition') ?? '', /^attachment; filename="?filehaven-upload\.sh"?$/);
    assert.ok(page.body.includes(`FILEHAVEN_KEY='${user.key}'`));
    const script = path.join(dir, `upload-${user.login}.sh`);
    await writeFile(script, page.body);
    await chmod(script, 0o700);

    // No backslash: the server strips a name's directory part, `\` included (API.md 2).
    const awkward = `shot; v1, "final" $HOME 'x' ü.png`;
    await writeFile(path.join(dir, awkward), 'file bytes');
    const files = await run(script, [awkward]);
    assert.equal(files.code, 0, files.stderr);
    const [link] = files.stdout.trim().split('\n');
    assert.match(link ?? '', new RegExp(`^${t.url}/[A-Z0-9]{10}/`));
    // curl writes a `"` in a multipart file name as %22 (as browsers do); the rest arrives as is.
    assert.equal(decodeURIComponent(new URL(link!).pathname.split('/')[2]!), awkward.replace(/"/g, '%22'));
    assert.equal(await (await fetch(`${link}?download=1`)).text(), 'file bytes');

    // Flameshot: flameshot gui --raw | filehaven-upload.sh -
    const piped = await run(script, ['-'], Buffer.from('png bytes'));
    assert.equal(piped.code, 0, piped.stderr);
    assert.match(piped.stdout.trim(), new RegExp(`^${t.url}/[A-Z0-9]{10}/screenshot-\\d{8}-\\d{6}\\.png$`));
    assert.equal(await (await fetch(`${piped.stdout.trim()}?download=1`)).text(), 'png bytes');
  });

  test('curl script: a refused upload and a missing file fail with the reason', async () => {
    const { user, browser } = await signedIn();
    const script = path.join(dir, `refused-${user.login}.sh`);
    await writeFile(script, (await browser.get(SCRIPT)).body);
    await chmod(script, 0o700);
    await t.server.services.accounts.regenerateApiKey(user.account.id);
    await writeFile(path.join(dir, 'a.txt'), 'a');
    const refused = await run(script, ['a.txt', 'no-such-file']);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /upload failed: Wrong apikey/);
    assert.match(refused.stderr, /not a file: no-such-file/);
    // Downloaded again, it carries the new key.
    assert.ok(!(await browser.get(SCRIPT)).body.includes(`'${user.key}'`));
  });
});
