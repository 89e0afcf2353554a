import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { FilehavenClient, PARALLEL_UPLOAD_MIN_BYTES } from '../../src/client/index.js';
import { sha256 } from '../helpers/downloads.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// Issue 28: the SDK sends a large file over `connections` tus partial uploads and one
// final when the server lists `concatenation` in Tus-Extension, and one upload to a
// server that does not (an older filehaven), seen in the requests it makes.

const GUARD = { timeout: 180_000 };

let t: TestServer;
let ada: TestAccount;
before(async () => {
  t = await startTestServer({ uploadVolumePremium: 1024 ** 3 });
  ada = await t.account({ premiumDays: 30 });
});
after(() => t.close());

/** A client whose requests are recorded (`METHOD Upload-Concat`), and whose server says `extensions` (when given) in Tus-Extension. */
function recordingClient(extensions?: string) {
  const sent: string[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    sent.push(`${init?.method ?? 'GET'} ${headers.get('upload-concat')?.split(';')[0] ?? '-'}`);
    const response = await fetch(input, init);
    if (extensions === undefined || !response.headers.has('tus-extension')) return response;
    const changed = new Headers(response.headers);
    changed.set('tus-extension', extensions);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: changed });
  };
  return { client: new FilehavenClient({ server: t.url, key: ada.key, fetch: fetcher }), sent };
}

test('a large file goes over `connections` partial uploads and one final where the server offers concatenation', GUARD, async () => {
  const content = randomBytes(PARALLEL_UPLOAD_MIN_BYTES + 5);
  const { client, sent } = recordingClient();
  const stored = await client.upload(new Blob([content]), { name: 'wide.bin', connections: 3, chunkSize: 16 * 1024 * 1024 });
  assert.equal(stored.size, content.length);
  assert.ok(stored.deleteLink);
  assert.equal((await t.server.services.store.files.byId(stored.id))?.sha256, sha256(content));
  assert.equal(sent.filter((line) => line === 'POST partial').length, 3, sent.join('\n'));
  assert.deepEqual(
    sent.filter((line) => line === 'POST final'),
    ['POST final'],
  );
});

test('a server without concatenation gets one upload; so does a file below the threshold, and connections: 1', GUARD, async () => {
  const big = randomBytes(PARALLEL_UPLOAD_MIN_BYTES);
  const older = recordingClient('creation,creation-with-upload,termination,expiration,checksum');
  const stored = await older.client.upload(new Blob([big]), { name: 'narrow.bin', connections: 4 });
  assert.equal((await t.server.services.store.files.byId(stored.id))?.sha256, sha256(big));
  assert.ok(!older.sent.some((line) => line.includes('partial') || line.includes('final')), older.sent.join('\n'));

  const single = recordingClient();
  await single.client.upload(new Blob([big]), { name: 'one.bin', connections: 1 });
  await single.client.upload(new Blob([big.subarray(1)]), { name: 'small.bin' });
  assert.ok(!single.sent.some((line) => line.includes('partial') || line.includes('final')), single.sent.join('\n'));
  await assert.rejects(single.client.upload(new Blob([big]), { name: 'x', connections: 17 }), /connections must be a whole number from 1 to 16/);
});
