import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import * as tus from 'tus-js-client';
import { directLink, sha256 } from '../helpers/downloads.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// Issue 11, "done when": the unchanged tus-js-client, as its README shows it for Node
// (its own HTTP stack), uploads to /uploads, resumes an upload it was stopped in, and
// reads the file's id from the finishing answer.

const MiB = 1024 * 1024;
const GUARD = { timeout: 120_000 };

let t: TestServer;
let ada: TestAccount;
before(async () => {
  t = await startTestServer();
  ada = await t.account({ premiumDays: 30, trafficBytes: 1024 * MiB });
});
after(() => t.close());

function run(upload: tus.Upload): Promise<tus.HttpResponse> {
  return new Promise((resolve, reject) => {
    upload.options.onSuccess = ({ lastResponse }) => resolve(lastResponse);
    upload.options.onError = reject;
    upload.start();
  });
}

async function served(fileId: string): Promise<Buffer> {
  const response = await fetch(await directLink(t, ada.key, fileId), { headers: { Authorization: ada.key } });
  return Buffer.from(await response.arrayBuffer());
}

test('tus-js-client uploads a file in chunks and reads the file id from the last answer', GUARD, async () => {
  const content = randomBytes(3 * MiB + 17);
  const last = await run(
    new tus.Upload(content, {
      endpoint: `${t.url}/uploads`,
      headers: { Authorization: ada.key },
      metadata: { filename: 'from tus-js-client.bin' },
      chunkSize: MiB,
    }),
  );
  const fileId = last.getHeader('Filehaven-File-Id');
  assert.match(fileId ?? '', /^[A-Z0-9]{10}$/);
  // tus 1.0: the last PATCH is 204 like every other; the file is named in headers.
  assert.equal(last.getStatus(), 204);
  assert.equal(sha256(await served(fileId!)), sha256(content));
});

test("tus-js-client stopped after a chunk resumes from the server's offset with the upload URL", GUARD, async () => {
  const content = randomBytes(4 * MiB);
  let uploadUrl = '';
  const first = new tus.Upload(content, {
    endpoint: `${t.url}/uploads`,
    headers: { Authorization: ada.key },
    metadata: { filename: 'resumed.bin' },
    chunkSize: MiB,
  });
  await new Promise<void>((resolve, reject) => {
    first.options.onChunkComplete = (_size, sent) => {
      if (sent >= 2 * MiB) {
        uploadUrl = first.url ?? '';
        void first.abort().then(resolve);
      }
    };
    first.options.onError = reject;
    first.start();
  });
  assert.match(uploadUrl, /\/uploads\/[0-9a-f]{32}$/);
  let startedAt = -1;
  const second = new tus.Upload(content, {
    uploadUrl,
    headers: { Authorization: ada.key },
    chunkSize: MiB,
    onProgress: (sent) => {
      if (startedAt < 0) startedAt = sent;
    },
  });
  const last = await run(second);
  assert.ok(startedAt >= 2 * MiB, `resumed at ${startedAt}`);
  assert.equal(sha256(await served(last.getHeader('Filehaven-File-Id')!)), sha256(content));
});

test('tus-js-client sees the Atom refusal: a file over the volume is refused at creation', GUARD, async () => {
  const small = await startTestServer({ uploadVolumeFree: MiB });
  try {
    const bob = await small.account();
    const error = await run(
      new tus.Upload(randomBytes(2 * MiB), { endpoint: `${small.url}/uploads`, headers: { Authorization: bob.key }, metadata: { filename: 'too much.bin' } }),
    ).then(
      () => null,
      (failure: tus.DetailedError) => failure,
    );
    assert.ok(error);
    assert.equal(error.originalResponse?.getStatus(), 429);
    assert.match(error.originalResponse?.getBody() ?? '', /<title>errorUploadLimit<\/title>/);
  } finally {
    await small.close();
  }
});
