import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { parseAtom } from '../helpers/xml.js';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

test('healthz answers 200', async () => {
  const response = await t.fetch('/healthz');
  assert.equal(response.status, 200);
  assert.equal(await response.text(), 'ok\n');
});

test('upload then fetch the bytes back through the download link', async () => {
  const { key } = await t.account();
  const up = await t.upload(key, 'hello.txt', 'hello world');
  assert.equal(up.response.status, 201, up.body);
  assert.equal(up.response.headers.get('content-type'), 'application/atom+xml; charset=utf-8');
  const feed = parseAtom(up.body);
  assert.equal(feed.feed.entry['ed:size'], '11');
  const download = await fetch(`${up.downloadLink}?download=1`);
  assert.equal(download.status, 200);
  assert.equal(await download.text(), 'hello world');
});
