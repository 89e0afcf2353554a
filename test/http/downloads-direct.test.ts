import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { bodyBytes, directLink, eventually, randomPayload, rawRequest, sha256, startAndAbort, trafficLeft } from '../helpers/downloads.js';
import { atomError, startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';

// Premium direct links and their traffic accounting (API.md section 6).

const HOUR = 3_600_000;
const GiB = 1024 ** 3;
const clock = new TestClock();
let t: TestServer;

before(async () => {
  t = await startTestServer({}, clock);
});
after(() => t.close());

/** A premium account with one uploaded file and a direct link to it. */
async function setup(options: { size?: number; trafficBytes?: number; name?: string } = {}) {
  const owner = await t.account({ premiumDays: 30, trafficBytes: options.trafficBytes ?? GiB });
  const payload = randomPayload(options.size ?? 256 * 1024);
  const up = await t.upload(owner.key, options.name ?? 'direct.bin', payload);
  assert.equal(up.response.status, 201, up.body);
  const url = await directLink(t, owner.key, up.id);
  return { owner, payload, id: up.id, url };
}

/** Asserts an Atom error with this status and code; returns the body. */
async function expectAtomError(response: Response, status: number, code: string): Promise<string> {
  const body = await response.text();
  assert.equal(response.status, status, body);
  assert.equal(response.headers.get('content-type'), 'application/atom+xml; charset=utf-8');
  assert.equal(atomError(body)?.code, code, body);
  assert.equal(response.headers.get('content-disposition'), null, 'an error is not an attachment');
  assert.equal(response.headers.get('content-range'), null);
  return body;
}

const auth = (account: TestAccount) => ({ Authorization: account.key });

/** A client that reads a GET's body and closes its end the moment the last byte is in (as curl does); prints the body bytes. */
const CLOSE_AT_LAST_BYTE = `
import net from 'node:net';
const [port, path, key, size] = process.argv.slice(1);
const socket = net.connect(Number(port), '127.0.0.1', () => socket.write('GET ' + path + ' HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nAuthorization: ' + key + '\\r\\n\\r\\n'));
let head = Buffer.alloc(0), body = -1;
socket.on('data', (chunk) => {
  if (body < 0) {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\\r\\n\\r\\n');
    if (end < 0) return;
    body = head.length - end - 4;
  } else body += chunk.length;
  if (body >= Number(size)) { socket.end(); console.log(body); }
});
`;

describe('direct link', () => {
  test('has the documented shape and downloads the exact bytes with the owner key', async () => {
    const { owner, payload, id, url } = await setup({ name: 'big report.pdf' });
    assert.match(url, new RegExp(`^${t.url}/direct/${id}/[^/]+/big%20report\\.pdf$`));
    const response = await fetch(url, { headers: auth(owner) });
    const body = await bodyBytes(response);
    assert.equal(response.status, 200);
    assert.equal(body.length, payload.length);
    assert.equal(sha256(body), sha256(payload));
    assert.equal(response.headers.get('content-length'), String(payload.length));
    assert.match(response.headers.get('content-disposition') ?? '', /^attachment; filename="big report\.pdf"$/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
  });

  test('a Bearer prefix on the key is accepted too', async () => {
    const { owner, payload, url } = await setup();
    const response = await fetch(url, { headers: { Authorization: `Bearer ${owner.key}` } });
    assert.equal(response.status, 200);
    assert.equal(sha256(await bodyBytes(response)), sha256(payload));
  });

  test('without Authorization, or with an unknown key: 401 errorPermissionDenied', async () => {
    const { url } = await setup();
    const body = await expectAtomError(await fetch(url), 401, 'errorPermissionDenied');
    assert.equal(atomError(body)?.message, 'Wrong apikey');
    await expectAtomError(await fetch(url, { headers: { Authorization: 'X'.repeat(32) } }), 401, 'errorPermissionDenied');
  });

  test("another premium account's key: 403", async () => {
    const { url } = await setup();
    const other = await t.account({ premiumDays: 30, trafficBytes: GiB });
    await expectAtomError(await fetch(url, { headers: auth(other) }), 403, 'errorPermissionDenied');
    assert.equal(await trafficLeft(t, other.key), GiB);
  });

  test('a tampered token or a token moved to another file: 404', async () => {
    const { owner, url, id } = await setup();
    const other = await t.upload(owner.key, 'other.bin', 'other bytes');
    const parts = new URL(url).pathname.split('/'); // ['', 'direct', id, token, name]
    const token = parts[3]!;
    const [expires, account, signature] = token.split('.') as [string, string, string];
    const flip = (s: string) => s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A');
    const variants = [
      `${expires}.${account}.${flip(signature)}`,
      `${Number(expires) + 3600}.${account}.${signature}`,
      `${expires}.${Number(account) + 1}.${signature}`,
      `${expires}.${account}`,
      'garbage',
    ];
    for (const bad of variants) {
      const tampered = url.replace(`/${token}/`, `/${bad}/`);
      await expectAtomError(await fetch(tampered, { headers: auth(owner) }), 404, 'errorFileNotFound');
    }
    await expectAtomError(await fetch(url.replace(`/${id}/`, `/${other.id}/`), { headers: auth(owner) }), 404, 'errorFileNotFound');
    assert.equal(await trafficLeft(t, owner.key), GiB);
  });

  test('expires after 24 hours: 403', async () => {
    const saved = clock.now;
    try {
      const { owner, url } = await setup();
      clock.advance(24 * HOUR - 60_000);
      assert.equal((await fetch(url, { method: 'HEAD', headers: auth(owner) })).status, 200);
      clock.advance(2 * 60_000);
      await expectAtomError(await fetch(url, { headers: auth(owner) }), 403, 'errorPermissionDenied');
      // A new link works again.
      const fresh = await directLink(t, owner.key, new URL(url).pathname.split('/')[2]!);
      assert.equal((await fetch(fresh, { headers: auth(owner) })).status, 200);
    } finally {
      clock.now = saved;
    }
  });

  test('a file blocked after the link was issued: 410; unblocked: works again', async () => {
    const { owner, id, url, payload } = await setup();
    await t.server.services.files.block(id);
    await expectAtomError(await fetch(url, { headers: auth(owner) }), 410, 'errorFileInNoDownloadedStatus');
    await expectAtomError(await fetch(url, { method: 'GET', headers: { ...auth(owner), Range: 'bytes=0-9' } }), 410, 'errorFileInNoDownloadedStatus');
    assert.equal(await trafficLeft(t, owner.key), GiB);
    await t.server.services.files.unblock(id);
    const response = await fetch(url, { headers: auth(owner) });
    assert.equal(response.status, 200);
    assert.equal(sha256(await bodyBytes(response)), sha256(payload));
  });

  test('a file deleted after the link was issued is never sent', async () => {
    const { owner, id, url } = await setup();
    const del = await t.fetch(`/files/${id}`, { method: 'DELETE', headers: auth(owner) });
    assert.equal(del.status, 200, await del.text());
    const response = await fetch(url, { headers: auth(owner) });
    const body = await response.text();
    assert.ok([404, 410].includes(response.status), `${response.status} ${body}`);
    assert.ok(atomError(body), body);
    assert.equal(await trafficLeft(t, owner.key), GiB);
  });

  test('premium expired after the link was issued: 403', async () => {
    const { owner, url } = await setup();
    const now = clock.now;
    await t.server.services.store.accounts.setPremium(owner.account.id, now - 30 * 24 * HOUR, now - 1000, GiB);
    await expectAtomError(await fetch(url, { headers: auth(owner) }), 403, 'errorPermissionDenied');
    assert.equal(await trafficLeft(t, owner.key), GiB);
  });
});

describe('premium traffic', () => {
  test('a full download subtracts exactly the file size', async () => {
    const { owner, url, payload } = await setup({ size: 300 * 1024 + 3 });
    const response = await fetch(url, { headers: auth(owner) });
    assert.equal((await bodyBytes(response)).length, payload.length);
    assert.equal(await trafficLeft(t, owner.key), GiB - payload.length);
    const again = await fetch(url, { headers: auth(owner) });
    assert.equal((await bodyBytes(again)).length, payload.length);
    assert.equal(await trafficLeft(t, owner.key), GiB - 2 * payload.length);
  });

  test('a Range download subtracts only the range length', async () => {
    const { owner, url, payload } = await setup();
    const response = await fetch(url, { headers: { ...auth(owner), Range: 'bytes=10-99' } });
    const body = await bodyBytes(response);
    assert.equal(response.status, 206);
    assert.ok(body.equals(payload.subarray(10, 100)));
    assert.equal(await trafficLeft(t, owner.key), GiB - 90);
    const suffix = await fetch(url, { headers: { ...auth(owner), Range: 'bytes=-1000' } });
    assert.equal((await bodyBytes(suffix)).length, 1000);
    assert.equal(await trafficLeft(t, owner.key), GiB - 1090);
  });

  test('HEAD, 304 and 416 subtract nothing', async () => {
    const { owner, url, payload } = await setup();
    const head = await fetch(url, { method: 'HEAD', headers: auth(owner) });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(payload.length));
    assert.equal((await bodyBytes(head)).length, 0);
    const etag = head.headers.get('etag')!;
    const notModified = await rawRequest(url, { headers: { ...auth(owner), 'If-None-Match': etag } });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.body.length, 0);
    const unsatisfiable = await fetch(url, { headers: { ...auth(owner), Range: `bytes=${payload.length}-` } });
    await unsatisfiable.arrayBuffer();
    assert.equal(unsatisfiable.status, 416);
    assert.equal(await trafficLeft(t, owner.key), GiB);
  });

  test('a download larger than the traffic left: 403 before any byte, nothing charged', async () => {
    const size = 200 * 1024;
    const { owner, url } = await setup({ size, trafficBytes: size - 1 });
    await expectAtomError(await fetch(url, { headers: auth(owner) }), 403, 'errorPermissionDenied');
    assert.equal(await trafficLeft(t, owner.key), size - 1);
    // A range that fits is still served.
    const part = await fetch(url, { headers: { ...auth(owner), Range: 'bytes=0-1023' } });
    assert.equal(part.status, 206);
    assert.equal((await bodyBytes(part)).length, 1024);
    assert.equal(await trafficLeft(t, owner.key), size - 1 - 1024);
  });

  test('traffic exactly equal to the size is enough, and leaves zero', async () => {
    const size = 100 * 1024;
    const { owner, url, payload } = await setup({ size, trafficBytes: size });
    const response = await fetch(url, { headers: auth(owner) });
    assert.equal(response.status, 200);
    assert.equal(sha256(await bodyBytes(response)), sha256(payload));
    assert.equal(await trafficLeft(t, owner.key), 0);
    await expectAtomError(await fetch(url, { headers: auth(owner) }), 403, 'errorPermissionDenied');
    assert.equal(await trafficLeft(t, owner.key), 0);
  });

  test('20 concurrent downloads with traffic for 5: exactly the successful ones are charged', async () => {
    const size = 64 * 1024;
    const { owner, url, payload } = await setup({ size, trafficBytes: 5 * size });
    const digest = sha256(payload);
    const results = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const response = await fetch(url, { headers: auth(owner) });
        const body = await bodyBytes(response);
        if (response.status === 200) assert.equal(sha256(body), digest, 'a successful download is complete');
        else {
          assert.equal(response.status, 403, body.toString());
          assert.equal(atomError(body.toString())?.code, 'errorPermissionDenied');
        }
        return response.status;
      }),
    );
    const succeeded = results.filter((status) => status === 200).length;
    const left = await trafficLeft(t, owner.key);
    assert.ok(left >= 0, `traffic went below zero: ${left}`);
    assert.ok(succeeded <= 5, `${succeeded} downloads succeeded with traffic for 5`);
    assert.equal(left, 5 * size - succeeded * size, 'exactly the successful downloads are charged');
    // Nothing was refunded or lost, so every reservation that fitted was used.
    assert.equal(succeeded, 5);
  });

  test('a client that closes its connection the moment it has the last byte is charged the whole file', async () => {
    // curl does this; the response may then close before its 'finish' event, and the last
    // chunk went uncharged (2 downloads in 3 over curl). The client is another process, as
    // curl is: in this one its reads would run in the server's own event loop.
    const size = 32 * 1024 * 1024;
    const rounds = 10;
    const { owner, id } = await setup({ size });
    for (let round = 0; round < rounds; round++) {
      const url = new URL(await directLink(t, owner.key, id));
      const client = await promisify(execFile)(
        process.execPath,
        ['--input-type=module', '-e', CLOSE_AT_LAST_BYTE, url.port, url.pathname, owner.key, String(size)],
        { timeout: 30_000 },
      );
      assert.equal(client.stdout.trim(), String(size), client.stderr);
    }
    await eventually(async () => (await trafficLeft(t, owner.key)) === GiB - rounds * size, `charged ${rounds} whole downloads of ${size} bytes`);
  });

  test('a client that aborts mid-download gets the unsent bytes refunded', async () => {
    const size = 16 * 1024 * 1024;
    const { owner, url } = await setup({ size });
    const { status, received } = await startAndAbort(url, auth(owner));
    assert.equal(status, 200);
    assert.ok(received > 0 && received < size);
    let left = GiB - size;
    await eventually(async () => {
      left = await trafficLeft(t, owner.key);
      return left > GiB - size;
    }, 'the unsent bytes are refunded');
    const charged = GiB - left;
    // Charged what left the process, measured as the body streams (more than the client
    // read when its own socket buffer held the rest), and less than the client got only by
    // what the process still buffered when it sampled last.
    assert.ok(received - charged <= 1024 * 1024, `charged ${charged} but the client received ${received}`);
    assert.ok(charged < size / 2, `charged ${charged} of ${size} for an aborted download`);
  });
});

describe('direct link with directLinkRequiresKey: false', () => {
  let open: TestServer;
  before(async () => {
    open = await startTestServer({ directLinkRequiresKey: false });
  });
  after(() => open.close());

  test('the signed URL alone downloads and charges the link owner', async () => {
    const owner = await open.account({ premiumDays: 30, trafficBytes: GiB });
    const payload = randomPayload(100 * 1024);
    const up = await open.upload(owner.key, 'open.bin', payload);
    const url = await directLink(open, owner.key, up.id);
    const response = await fetch(url);
    assert.equal(response.status, 200);
    assert.equal(sha256(await bodyBytes(response)), sha256(payload));
    assert.equal(await trafficLeft(open, owner.key), GiB - payload.length);
  });

  test('a tampered token is still refused, and so is a link of an expired premium', async () => {
    const owner = await open.account({ premiumDays: 30, trafficBytes: GiB });
    const up = await open.upload(owner.key, 'open2.bin', 'some bytes');
    const url = await directLink(open, owner.key, up.id);
    const token = new URL(url).pathname.split('/')[3]!;
    const flipped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    await expectAtomError(await fetch(url.replace(`/${token}/`, `/${flipped}/`)), 404, 'errorFileNotFound');
    const now = Date.now();
    await open.server.services.store.accounts.setPremium(owner.account.id, now - 30 * 24 * HOUR, now - 1000, GiB);
    await expectAtomError(await fetch(url), 403, 'errorPermissionDenied');
  });
});
