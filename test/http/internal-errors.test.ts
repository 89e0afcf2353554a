import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertAtomError, read } from '../helpers/api-checks.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

/**
 * An unexpected failure (here the metadata database gone from under the server) is a 500
 * whose body says nothing of the failure: no stack trace, no driver message, no path.
 */
let t: TestServer;
let user: TestAccount;
let fileId: string;

before(async () => {
  t = await startTestServer();
  user = await t.account({ premiumDays: 30 });
  fileId = (await t.upload(user.key, 'a.txt', 'hello')).id;
  assert.ok(fileId);
  await t.server.services.store.close();
});
after(() => t.close().catch(() => {}));

/** What a leaked failure would carry: stack frames, source paths, the driver's words. */
function assertNothingLeaks(body: string): void {
  assert.doesNotMatch(body, /\bat [\w.<>]+ \(|\.(ts|js):\d+/, 'a stack frame');
  assert.doesNotMatch(body, /\/work\/|node_modules|src\//, 'a path');
  assert.doesNotMatch(body, /destroyed|driver|kysely|sqlite|postgres|TypeError|Error:/i, 'the failure itself');
}

test('an API request answers 500 errorInternal in Atom and nothing else', async () => {
  for (const [method, path] of [
    ['GET', '/account'],
    ['GET', `/files/${fileId}`],
    ['POST', '/folders'],
  ] as const) {
    const response = await read(await t.fetch(path, { method, headers: { Authorization: user.key } }));
    assertAtomError(response, 500, 'errorInternal', 'Internal server error');
    assertNothingLeaks(response.body);
  }
});

test('an upload answers 500 errorUploadFaild, or errorInternal, and nothing else', async () => {
  const response = await t.upload(user.key, 'b.txt', 'bytes');
  assert.equal(response.response.status, 500, response.body);
  assert.match(response.body, /<title>(errorUploadFaild|errorInternal)<\/title>/);
  assertNothingLeaks(response.body);
});

test('a page answers 500 with the generic page', async () => {
  const response = await read(await t.fetch(`/${fileId}/a.txt`, { headers: { Accept: 'text/html' } }));
  assert.equal(response.status, 500, response.body);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(response.body, /Something went wrong on our side/);
  assertNothingLeaks(response.body);
});
