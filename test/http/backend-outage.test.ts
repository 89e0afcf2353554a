import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, assertAtomOk, read } from '../helpers/api-checks.js';
import { TEST_BACKEND } from '../helpers/backend.js';
import { POSTGRES_TEST_URL } from '../helpers/postgres-test-schema.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';
import { type CuttableRelay, cuttableRelay } from '../helpers/tcp-cut.js';

/**
 * PostgreSQL or the object store going away mid-service (issue 8, "Bad input and faults"):
 * requests get errorUploadFaild or errorInternal in Atom, nothing half-written becomes
 * visible, and the server serves again as soon as the backend is back. The server talks to
 * both through TCP relays the test cuts and restores.
 */
describe('backend outages', { skip: TEST_BACKEND !== 'postgres-s3' && 'PostgreSQL + S3 only: SQLite and the data folder do not go away' }, () => {
  let t: TestServer;
  let user: TestAccount;
  let database: CuttableRelay;
  let objects: CuttableRelay;
  let firstId: string;

  before(async () => {
    const pgUrl = new URL(POSTGRES_TEST_URL);
    const s3Url = new URL(process.env.FILEHAVEN_TEST_S3_ENDPOINT!);
    database = await cuttableRelay(pgUrl.hostname, Number(pgUrl.port || 5432));
    objects = await cuttableRelay(s3Url.hostname, Number(s3Url.port || 80));
    const relayedPg = new URL(POSTGRES_TEST_URL);
    relayedPg.host = `127.0.0.1:${database.port}`;
    t = await startTestServer({ databaseUrl: relayedPg.toString(), s3Endpoint: `http://127.0.0.1:${objects.port}` });
    user = await t.account({ premiumDays: 30 });
    firstId = (await t.upload(user.key, 'first.txt', 'first bytes')).id;
    assert.ok(firstId);
  });
  after(async () => {
    database?.restore();
    objects?.restore();
    await t?.close();
    await Promise.all([database?.close(), objects?.close()]);
  });

  const listedIds = async () => {
    const body = (await read(await t.fetch('/files', { headers: { Authorization: user.key } }))).body;
    return [...body.matchAll(/<entry>\s*<id>([^<]+)<\/id>/g)].map((m) => m[1]);
  };

  test('the database down: errorInternal in Atom; back up: served again', async () => {
    database.cut();
    try {
      assertAtomError(await read(await t.fetch('/account', { headers: { Authorization: user.key } })), 500, 'errorInternal', 'Internal server error');
      const upload = await t.upload(user.key, 'during-db-outage.txt', 'lost?');
      assert.equal(upload.response.status, 500, upload.body);
      assert.match(upload.body, /<title>(errorUploadFaild|errorInternal)<\/title>/);
    } finally {
      database.restore();
    }
    assertAtomOk(await read(await t.fetch('/account', { headers: { Authorization: user.key } })), 200, 'Account Info');
    assert.deepEqual(await listedIds(), [firstId], 'nothing from the outage became a file');
  });

  test('the object store down: the upload is errorUploadFaild, the download a 500; back up: served again', async () => {
    objects.cut();
    try {
      const upload = await t.upload(user.key, 'during-s3-outage.txt', 'bytes that cannot be stored');
      assertAtomError({ status: upload.response.status, headers: upload.response.headers, body: upload.body }, 500, 'errorUploadFaild');
      const download = await t.fetch(`/${firstId}/first.txt?download=1`);
      assert.equal(download.status, 500);
      await download.arrayBuffer();
    } finally {
      objects.restore();
    }
    assert.deepEqual(await listedIds(), [firstId], 'the failed upload left no file');
    const again = await t.upload(user.key, 'after.txt', 'after the outage');
    assert.equal(again.response.status, 201, again.body);
    const download = await t.fetch(`/${firstId}/first.txt?download=1`);
    assert.equal(download.status, 200);
    assert.equal(await download.text(), 'first bytes');
  });
});
