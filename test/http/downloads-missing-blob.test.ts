import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { directLink, eventually, randomPayload, sha256, trafficLeft } from '../helpers/downloads.js';
import { atomError, startTestServer, type TestServer } from '../helpers/server.js';

// A file whose bytes went away while a download starts (deleted by the owner, collected):
// 404 errorFileNotFound as the file's absence, not a 500 (STYLE.md rule 5).

let t: TestServer;

before(async () => {
  t = await startTestServer();
});
after(() => t.close());

test('a file whose blob is gone from storage: 404 page for ?download=1, 404 Atom for a direct download', async () => {
  const owner = await t.account({ premiumDays: 30, trafficBytes: 1024 ** 3 });
  const payload = randomPayload(10_000);
  const up = await t.upload(owner.key, 'vanishing.bin', payload);
  assert.equal(up.response.status, 201, up.body);
  const direct = await directLink(t, owner.key, up.id);
  const digest = sha256(payload);
  await t.storage.removeBytes(digest);

  const page = await fetch(`${up.downloadLink}?download=1`, { headers: { Accept: 'text/html' } });
  const pageBody = await page.text();
  assert.equal(page.status, 404, pageBody);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(page.headers.get('content-disposition'), null, 'an error is not an attachment');

  const response = await fetch(direct, { headers: { Authorization: owner.key } });
  const body = await response.text();
  assert.equal(response.status, 404, body);
  assert.equal(response.headers.get('content-type'), 'application/atom+xml; charset=utf-8');
  assert.equal(atomError(body)?.code, 'errorFileNotFound', body);
  assert.equal(response.headers.get('content-disposition'), null, 'an error is not an attachment');
  // The traffic reserved for it is given back.
  await eventually(async () => (await trafficLeft(t, owner.key)) === 1024 ** 3, 'the reserved traffic given back');
});
