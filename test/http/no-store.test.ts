import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser, csrfOf } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Issue 14: every answer that shows an API key or a direct link says `Cache-Control:
// no-store` (RFC 9111 5.2.2.5), so no browser cache or proxy keeps a copy of it.

const PROFILE = '/accounts/profile/misc';
const REGENERATE = '/accounts/profile/misc/regenerate-key';
const GiB = 1024 ** 3;

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

/** Asserts the status and that no cache may store the answer; returns the body. */
async function noStore(response: Response, status: number): Promise<string> {
  const body = await response.text();
  assert.equal(response.status, status, body);
  assert.equal(response.headers.get('cache-control'), 'no-store', `${response.url}: ${body}`);
  return body;
}

const apikeys = (fields: Record<string, string>) => t.fetch('/apikeys', { method: 'POST', body: new URLSearchParams(fields) });

describe('Cache-Control: no-store', () => {
  test('POST /apikeys: the answer carries the key', async () => {
    const { login, password, key } = await t.account();
    const body = await noStore(await apikeys({ login, password }), 201);
    assert.ok(body.includes(`<content type="text">${key}</content>`), body);
    // The same with the `pass` alias, multipart, and _method=POST: one handler, one header.
    await noStore(await apikeys({ login, pass: password }), 201);
    const form = new FormData();
    form.append('login', login);
    form.append('password', password);
    await noStore(await t.fetch('/apikeys', { method: 'POST', body: form }), 201);
  });

  test('POST /apikeys create=1 on an account without a key: the new key', async () => {
    const login = `nokey-${process.pid}`;
    const password = 'correct horse battery';
    await t.server.services.accounts.create({ login, password });
    const body = await noStore(await apikeys({ login, password, create: '1' }), 201);
    assert.match(body, /<content type="text">[^<]+<\/content>/);
  });

  test('GET /files/<id>;DirectLink (and %3B): the answer carries the signed link', async () => {
    const owner = await t.account({ premiumDays: 30, trafficBytes: GiB });
    const up = await t.upload(owner.key, 'linked.bin', 'direct bytes');
    assert.equal(up.response.status, 201, up.body);
    for (const ref of [`${up.id};DirectLink`, `${up.id}%3BDirectLink`]) {
      const body = await noStore(await t.fetch(`/files/${ref}`, { headers: { Authorization: owner.key } }), 200);
      assert.match(body, new RegExp(`<link href="${t.url}/direct/${up.id}/[^"]+" rel="enclosure"`));
    }
  });

  test('POST /files and a copy: the answer carries the delete link, a secret shown once', async () => {
    const owner = await t.account();
    const form = new FormData();
    form.append('upload', new Blob(['some bytes']), 'kept.txt');
    const body = await noStore(await t.fetch('/files', { method: 'POST', headers: { Authorization: owner.key }, body: form }), 201);
    const id = /<entry>\s*<id>([^<]+)<\/id>/.exec(body)?.[1];
    assert.ok(id && /\/delete\//.test(body), body);
    await noStore(await t.fetch(`/files/copy/${id}`, { method: 'POST', headers: { Authorization: owner.key } }), 201);
  });

  test('the profile page shows the key, also when it answers 400 to an unconfirmed regenerate', async () => {
    const { login, password, key } = await t.account();
    const browser = new Browser(t.url);
    const signedIn = await browser.signIn(login, password);
    assert.equal(signedIn.status, 303, signedIn.body);
    const page = await browser.get(PROFILE);
    assert.equal(page.status, 200, page.body);
    assert.ok(page.body.includes(`id="api-key-value">${key}</code>`), page.body);
    assert.equal(page.response.headers.get('cache-control'), 'no-store');

    const unconfirmed = await browser.post(REGENERATE, { csrf: csrfOf(page.body)! });
    assert.equal(unconfirmed.status, 400, unconfirmed.body);
    assert.ok(unconfirmed.body.includes(`id="api-key-value">${key}</code>`), unconfirmed.body);
    assert.equal(unconfirmed.response.headers.get('cache-control'), 'no-store');
  });
});
