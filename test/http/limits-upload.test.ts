import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { eventually, filePart, multipartBody, type RawOutcome, steppedRequest } from '../helpers/raw-upload.js';
import { atomError, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import type { StorageSnapshot } from '../helpers/storage-view.js';

// The upload volume limit (API.md 8): per account over a rolling 24 h, free and premium
// apart, errorUploadLimit (429) with a Retry-After that says when enough volume frees up;
// parallel uploads of one account never pass it together, and refused uploads keep nothing.

const KiB = 1024;
const HOUR = 3_600_000;
const FREE = 1024 * KiB;
const PREMIUM = 3 * 1024 * KiB;
/** A hang guard, not a speed check. */
const GUARD = { timeout: 120_000 };

const clock = new TestClock();
let t: TestServer;
before(async () => {
  t = await startTestServer({ uploadVolumeFree: FREE, uploadVolumePremium: PREMIUM }, clock);
});
after(() => t.close());

type Upload = Awaited<ReturnType<TestServer['upload']>>;

function expectStored(up: Upload): void {
  assert.equal(up.response.status, 201, up.body);
}

/** A 429 errorUploadLimit; returns its Retry-After in seconds. */
function expectLimited(status: number, body: string, retryAfter: string | null | undefined): number {
  assert.equal(status, 429, body);
  assert.equal(atomError(body)?.code, 'errorUploadLimit', body);
  assert.match(retryAfter ?? '', /^\d+$/, 'Retry-After in seconds');
  return Number(retryAfter);
}

function expectUploadLimit(up: Upload): number {
  return expectLimited(up.response.status, up.body, up.response.headers.get('retry-after'));
}

/** The upload_log total of an account, read through a connection of the test's own. */
async function loggedBytes(accountId: number): Promise<number> {
  const rows = await t.storage.rows('upload_log');
  return rows.filter((row) => Number(row.account_id) === accountId).reduce((sum, row) => sum + Number(row.bytes), 0);
}

/** No staged upload and no blob that no row names: refused uploads keep nothing. */
async function expectNoTempFiles(): Promise<void> {
  assert.ok(await eventually(async () => (await t.storage.leftovers()).length === 0), `left behind: ${(await t.storage.leftovers()).join(', ')}`);
}

describe('upload volume', () => {
  test('429 past the limit, Retry-After from the oldest uploads; uploads work again once they leave the window', GUARD, async () => {
    const { key } = await t.account();
    const start = clock.now;
    expectStored(await t.upload(key, 'a.bin', randomBytes(600 * KiB)));
    clock.advance(HOUR);
    expectStored(await t.upload(key, 'b.bin', randomBytes(400 * KiB)));

    // 24 KiB are left: a bigger file is refused while it streams...
    const over = await t.upload(key, 'c.bin', randomBytes(100 * KiB));
    // ...until a.bin, the oldest, leaves the window: 23 h from now.
    assert.equal(expectUploadLimit(over), 23 * 3600);
    await expectNoTempFiles();

    // What is left can still be used, to the byte.
    expectStored(await t.upload(key, 'exact.bin', randomBytes(24 * KiB)));
    // Nothing left: refused before the body is read.
    assert.equal(expectUploadLimit(await t.upload(key, 'one-byte.bin', 'x')), 23 * 3600);

    // Just past the moment a.bin leaves the window, its 600 KiB are free again.
    clock.set(new Date(start + 24 * HOUR + 1000).toISOString());
    expectStored(await t.upload(key, 'd.bin', randomBytes(500 * KiB)));
    // 100 KiB left; the next to leave is b.bin, stored an hour after a.bin.
    const again = await t.upload(key, 'e.bin', randomBytes(200 * KiB));
    assert.equal(expectUploadLimit(again), 3600 - 1);
    await expectNoTempFiles();
  });

  test('free and premium accounts have their own limits', GUARD, async () => {
    const free = await t.account();
    const premium = await t.account({ premiumDays: 30 });
    const big = randomBytes(1536 * KiB);

    // Over the free limit in one file: nothing stored can free enough, so a whole window.
    assert.equal(expectUploadLimit(await t.upload(free.key, 'big.bin', big)), 24 * 3600);
    expectStored(await t.upload(premium.key, 'big.bin', big));
    expectStored(await t.upload(premium.key, 'big-2.bin', randomBytes(1536 * KiB)));
    // 3 MiB used of the premium 3 MiB.
    expectUploadLimit(await t.upload(premium.key, 'more.bin', 'x'));
    // The free account is still untouched.
    expectStored(await t.upload(free.key, 'small.bin', randomBytes(512 * KiB)));
    assert.equal(await loggedBytes(free.account.id), 512 * KiB);
    assert.equal(await loggedBytes(premium.account.id), 3 * 1024 * KiB);
    await expectNoTempFiles();
  });

  test('copies store no bytes and do not count', GUARD, async () => {
    const { key, account } = await t.account();
    const full = await t.upload(key, 'full.bin', randomBytes(FREE));
    expectStored(full);
    expectUploadLimit(await t.upload(key, 'more.bin', 'x'));
    const copy = await t.fetch(`/files/copy/${full.id}`, { method: 'POST', headers: { Authorization: key } });
    assert.equal(copy.status, 201, await copy.text());
    assert.equal(await loggedBytes(account.id), FREE);
  });

  test('an unlimited setting lets any volume through', GUARD, async () => {
    const other = await startTestServer({ uploadVolumeFree: null });
    try {
      const { key } = await other.account();
      for (let i = 0; i < 3; i++) expectStored(await other.upload(key, `f${i}.bin`, randomBytes(512 * KiB)));
    } finally {
      await other.close();
    }
  });
});

describe('parallel uploads of one account', () => {
  const SIZE = 200 * KiB;
  const COUNT = 20;

  /** Checks the outcome of a burst: stored total within the limit, the rest 429, nothing extra on disk. */
  async function checkBurst(
    accountId: number,
    outcomes: Array<{ status: number; body: string; retryAfter: string | null | undefined }>,
    before: StorageSnapshot,
  ): Promise<number> {
    const stored = outcomes.filter((o) => o.status === 201).length;
    for (const o of outcomes) if (o.status !== 201) expectLimited(o.status, o.body, o.retryAfter);
    assert.ok(stored * SIZE <= FREE, `${stored} uploads of ${SIZE} bytes passed the limit of ${FREE}`);
    assert.equal(await loggedBytes(accountId), stored * SIZE);
    await expectNoTempFiles();
    const now = await t.storage.snapshot();
    // Every file is different: one blob and one row per stored upload, none for the others.
    assert.equal(now.blobKeys.length, before.blobKeys.length + stored);
    assert.equal(now.blobRows, before.blobRows + stored);
    assert.equal(now.fileRows, before.fileRows + stored);
    return stored;
  }

  test(`${COUNT} uploads at once with Content-Length: the stored total never passes the limit`, GUARD, async () => {
    const { key, account } = await t.account();
    const before = await t.storage.snapshot();
    const ups = await Promise.all(Array.from({ length: COUNT }, (_, i) => t.upload(key, `p${i}.bin`, randomBytes(SIZE))));
    const stored = await checkBurst(
      account.id,
      ups.map((up) => ({ status: up.response.status, body: up.body, retryAfter: up.response.headers.get('retry-after') })),
      before,
    );
    // A declared length is reserved whole, first come first served: the first upload always fits.
    assert.ok(stored >= 1, 'at least one upload fits');
  });

  test(`${COUNT} chunked uploads (no Content-Length) interleaved: counted chunk by chunk, never past the limit`, GUARD, async () => {
    const { key, account } = await t.account();
    const before = await t.storage.snapshot();
    const boundary = '----filehaven-limits-boundary';
    // Every upload sends its first half, waits until all first halves are out, then the
    // rest: together they ask for twice the limit while all of them are in flight.
    // (An upload refused during its first half counts as out, or the others would wait forever.)
    let out = 0;
    let allOut!: () => void;
    const barrier = new Promise<void>((resolve) => (allOut = resolve));
    const arrived = () => {
      if (++out === COUNT) allOut();
    };
    const outcomes: RawOutcome[] = await Promise.all(
      Array.from({ length: COUNT }, (_, i) => {
        const body = multipartBody(boundary, [filePart('upload', `c${i}.bin`, randomBytes(SIZE))]);
        const half = Math.floor(body.length / 2);
        let counted = false;
        const once = () => {
          if (!counted) arrived();
          counted = true;
        };
        const request = steppedRequest(t.url, '/files', { Authorization: key, 'Content-Type': `multipart/form-data; boundary=${boundary}` }, [
          body.subarray(0, half),
          async () => {
            once();
            await barrier;
          },
          body.subarray(half),
        ]);
        return request.finally(once);
      }),
    );
    await checkBurst(
      account.id,
      outcomes.map((outcome) => {
        assert.ok(outcome.response, `no response: ${outcome.error?.code}`);
        return { status: outcome.response.status, body: outcome.response.body, retryAfter: outcome.response.headers['retry-after'] as string | undefined };
      }),
      before,
    );
    // Whatever was refused gave its reservation back: the rest of the volume is usable.
    const left = FREE - (await loggedBytes(account.id));
    if (left > 0) expectStored(await t.upload(key, 'rest.bin', randomBytes(left)));
    expectUploadLimit(await t.upload(key, 'none-left.bin', 'x'));
  });
});
