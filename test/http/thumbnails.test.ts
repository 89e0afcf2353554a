import assert from 'node:assert/strict';
import { promises as fsPromises } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { LocalThumbnailStore } from '../../src/blob/local-thumbnail-store.js';
import type { ThumbnailStore } from '../../src/blob/thumbnail-store.js';
import { openThumbnailStore } from '../../src/configured-stores.js';
import type { FileRecord } from '../../src/domain/types.js';
import { thumbnailPath } from '../../src/http/web/thumbnail-route.js';
import { GcService } from '../../src/services/gc-service.js';
import { type ThumbnailLimits, ThumbnailsService } from '../../src/services/thumbnails-service.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// Thumbnails (GET /thumb/<id>/<key>, docs/web.md "Thumbnails"): made once with sharp and
// stored beside the blobs, served with immutable caching and an ETag; an icon for content
// without one (not an image, corrupt, a decompression bomb), remembered so it is never
// tried again; only for active files; removed by gc with the blob they were made from.

const HOUR_MS = 3_600_000;

let t: TestServer;
let owner: TestAccount;
let thumbs: ThumbnailStore;

before(async () => {
  t = await startTestServer();
  owner = await t.account();
  thumbs = await openThumbnailStore(t.config, t.server.services.blobs);
});
after(() => t?.close());

async function uploaded(name: string, content: Buffer | string): Promise<FileRecord> {
  const up = await t.upload(owner.key, name, content);
  assert.equal(up.response.status, 201, up.body);
  return (await t.server.services.store.files.byId(up.id))!;
}

const photo = (width: number, height: number, format: 'png' | 'jpeg' = 'png') =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 40 } } })
    [format]()
    .toBuffer();

/** CRC-32 (ISO-HDLC), for the hand-made PNG below. */
function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * A valid PNG of width × height 1-bit grey pixels, all black: a few kilobytes that decode
 * to width × height bytes or more (a decompression bomb at the sizes used here).
 */
function bombPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const rows = Buffer.alloc(height * (1 + Math.ceil(width / 8))); // filter 0, black pixels
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Asserts the fallback icon; returns the response. */
async function assertIcon(response: Response, lasting: boolean): Promise<void> {
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'image/svg+xml');
  assert.match(await response.text(), /^<svg /);
  assert.equal(response.headers.get('cache-control'), lasting ? 'private, max-age=31536000, immutable' : 'no-store');
}

/**
 * Runs `body` with the server's thumbnails service replaced by one with these limits and
 * this way of opening a file's bytes (the real one by default).
 */
async function withThumbnails(
  options: { limits?: Partial<ThumbnailLimits>; open?: (file: FileRecord) => Promise<Readable> },
  body: () => Promise<void>,
): Promise<void> {
  const services = t.server.services;
  const original = services.thumbnails;
  const downloads = options.open ? { open: options.open } : services.downloads;
  services.thumbnails = new ThumbnailsService({ thumbs, store: services.store, downloads, clock: services.clock, log: () => {}, limits: options.limits });
  try {
    await body();
  } finally {
    services.thumbnails = original;
  }
}

describe('GET /thumb/<id>/<key>', () => {
  test('an image: a WebP of at most 256 px a side, made once and stored, immutable with an ETag and 304', async () => {
    const file = await uploaded('holiday.png', await photo(1200, 800));
    assert.equal(await thumbs.get(file.sha256), null);
    const response = await t.fetch(thumbnailPath(file));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'image/webp');
    assert.equal(response.headers.get('cache-control'), 'private, max-age=31536000, immutable');
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const etag = response.headers.get('etag');
    assert.ok(etag?.startsWith('"') && etag.includes(file.sha256.slice(0, 20)), etag ?? '');
    const bytes = Buffer.from(await response.arrayBuffer());
    const meta = await sharp(bytes).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 256, 171]);
    // Stored, under the digest: what later requests are served from.
    assert.deepEqual(await thumbs.get(file.sha256), bytes);

    // (fetch adds `Cache-Control: no-cache` to a conditional request unless it has one: a
    // browser revalidating its cache sends max-age=0.)
    const again = await t.fetch(thumbnailPath(file), { headers: { 'If-None-Match': etag!, 'Cache-Control': 'max-age=0' } });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get('etag'), etag);

    // A copy (the same digest) shares the stored thumbnail; a small image is not enlarged.
    const small = await uploaded('icon.jpg', await photo(40, 30, 'jpeg'));
    const smallMeta = await sharp(Buffer.from(await (await t.fetch(thumbnailPath(small))).arrayBuffer())).metadata();
    assert.deepEqual([smallMeta.width, smallMeta.height], [40, 30]);
  });

  test('content without a thumbnail gets the icon, remembered: not an image, corrupt, a decompression bomb', async () => {
    const text = await uploaded('not-really.png', 'just some text pretending to be an image');
    await assertIcon(await t.fetch(thumbnailPath(text)), true);
    assert.deepEqual(await thumbs.get(text.sha256), Buffer.alloc(0), 'remembered as having none');

    const corrupt = await uploaded('broken.jpg', Buffer.concat([(await photo(300, 200, 'jpeg')).subarray(0, 200), Buffer.alloc(500, 7)]));
    await assertIcon(await t.fetch(thumbnailPath(corrupt)), true);
    assert.deepEqual(await thumbs.get(corrupt.sha256), Buffer.alloc(0));

    // 12,000 × 12,000 = 144 megapixels, over the 40 megapixel limit: refused from its header.
    const bomb = bombPng(12_000, 12_000);
    assert.ok(bomb.length < 64 * 1024, `${bomb.length} bytes`);
    const bombFile = await uploaded('bomb.png', bomb);
    await assertIcon(await t.fetch(thumbnailPath(bombFile)), true);
    assert.deepEqual(await thumbs.get(bombFile.sha256), Buffer.alloc(0));
    // Asked again: the marker answers, the same icon.
    await assertIcon(await t.fetch(thumbnailPath(bombFile)), true);

    // The same bomb below the limit would decode: the limit, not the file, refused it.
    const decodable = await sharp(bombPng(1_000, 1_000)).metadata();
    assert.equal(decodable.width, 1_000);
  });

  test('only active files, only the current key', async () => {
    const file = await uploaded('kept.png', await photo(100, 100));
    const wrong = thumbnailPath({ id: file.id, sha256: '0'.repeat(64) });
    assert.equal((await t.fetch(wrong, { headers: { Accept: 'text/html' } })).status, 404);
    assert.equal((await t.fetch(`/thumb/ZZZZZZZZZZ/1-${file.sha256.slice(0, 20)}`)).status, 404);

    const blocked = await uploaded('blocked.png', await photo(101, 100));
    await t.server.services.files.block(blocked.id);
    assert.equal((await t.fetch(thumbnailPath(blocked))).status, 404);
    const deleted = await uploaded('deleted.png', await photo(102, 100));
    await t.server.services.files.deleteOwned(owner.account, deleted.id);
    assert.equal((await t.fetch(thumbnailPath(deleted))).status, 404);
  });

  test('gc removes a thumbnail once its blob is gone, keeps those whose blob stays, and never keeps a blob', async () => {
    const gone = await uploaded('gone.png', await photo(103, 100));
    const stays = await uploaded('stays.png', await photo(104, 100));
    for (const file of [gone, stays]) assert.equal((await t.fetch(thumbnailPath(file))).status, 200);
    assert.ok(await thumbs.get(gone.sha256));
    await t.server.services.files.deleteOwned(owner.account, gone.id);

    // Stored objects carry the store's own times: gc's wall clock is moved past the grace instead.
    const { store, blobs, files, reservations, clock, config, metrics, resumable } = t.server.services;
    const gc = new GcService({
      store,
      blobs,
      files,
      reservations,
      clock,
      metrics,
      thumbnails: thumbs,
      fileClock: () => Date.now() + 2 * HOUR_MS,
      tempGraceMs: config.tempGraceMs,
      expireAfterDays: 0,
      holder: 'thumbnail test gc',
      resumable: resumable.service,
    });
    const dry = await gc.run({ dryRun: true });
    assert.equal(dry.thumbnailsRemoved, 1);
    assert.ok(await thumbs.get(gone.sha256), 'a dry run removes nothing');
    const report = await gc.run();
    assert.equal(report.thumbnailsRemoved, 1);
    assert.equal(await thumbs.get(gone.sha256), null);
    assert.ok((await thumbs.get(stays.sha256))?.length);
    // The deleted file's blob went with its last file: its thumbnail did not keep it.
    assert.equal(await store.blobs.keyOf(gone.sha256), null);
    assert.notEqual(await store.blobs.keyOf(stays.sha256), null);
  });

  test('beyond the queue (maxWaiting), the icon at once, not cached; the queued one still gets its thumbnail', async () => {
    const first = await uploaded('queued-1.png', await photo(110, 100));
    const second = await uploaded('queued-2.png', await photo(111, 100));
    let opened!: () => void;
    const isOpen = new Promise<void>((resolve) => (opened = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const real = t.server.services.downloads;
    // The first file's bytes are held back until the second request was answered.
    const open = async (file: FileRecord) => {
      if (file.id === first.id) {
        opened();
        await gate;
      }
      return real.open(file);
    };
    await withThumbnails({ limits: { concurrency: 1, maxWaiting: 0 }, open }, async () => {
      const pending = t.fetch(thumbnailPath(first));
      await isOpen;
      // Answered at once, not after the first (a queue that let it wait would hang here).
      await assertIcon(await t.fetch(thumbnailPath(second), { signal: AbortSignal.timeout(5_000) }), false);
      assert.equal(await thumbs.get(second.sha256), null, 'nothing remembered for the one turned away');
      release();
      const response = await pending;
      assert.equal(response.headers.get('content-type'), 'image/webp');
      await response.arrayBuffer();
      // Asked again once the queue is free: its thumbnail.
      assert.equal((await t.fetch(thumbnailPath(second))).headers.get('content-type'), 'image/webp');
    });
  });

  test('the signature is checked once 16 bytes are in, however small the chunks: a non-image is left after them', async () => {
    const text = await uploaded('tiny-chunks.png', 'not an image at all; '.repeat(50_000));
    let read = 0;
    const open = async (file: FileRecord) => {
      const bytes = await t.server.services.downloads.open(file).then(async (stream) => {
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks);
      });
      // Four bytes at a time, counted as they are taken.
      return Readable.from(
        (function* () {
          for (let at = 0; at < bytes.length; at += 4) {
            read += 4;
            yield bytes.subarray(at, at + 4);
          }
        })(),
        { objectMode: false, highWaterMark: 4 },
      );
    };
    await withThumbnails({ open }, async () => {
      await assertIcon(await t.fetch(thumbnailPath(text)), true);
    });
    assert.ok(read < 256, `${read} bytes read`);
  });

  test("data folder: a thumbnail is staged in <data>/tmp, so a crash leftover is removed by gc's temp sweep", async (context) => {
    if (!(thumbs instanceof LocalThumbnailStore)) return context.skip('the data folder store only');
    const renamed: string[] = [];
    const rename = fsPromises.rename;
    fsPromises.rename = async (from, to) => {
      renamed.push(String(from));
      return rename(from, to);
    };
    try {
      await thumbs.put('ab'.repeat(32), Buffer.from('thumb'));
    } finally {
      fsPromises.rename = rename;
    }
    assert.equal(renamed.length, 1);
    const tmp = path.join(t.dataDir, 'tmp');
    assert.equal(path.dirname(renamed[0]!), tmp);
    // Nothing but thumbnails in thumbs/.
    assert.deepEqual(await fsPromises.readdir(path.join(t.dataDir, 'thumbs', 'ab')), ['ab'.repeat(32)]);

    // What a crash between the write and the rename leaves: gc's temp sweep removes it.
    const leftover = path.join(tmp, path.basename(renamed[0]!));
    await fsPromises.writeFile(leftover, 'half a thumbnail');
    const { store, blobs, files, reservations, clock, config, metrics, resumable } = t.server.services;
    const gc = new GcService({
      store,
      blobs,
      files,
      reservations,
      clock,
      metrics,
      thumbnails: thumbs,
      fileClock: () => Date.now() + 2 * HOUR_MS,
      tempGraceMs: config.tempGraceMs,
      expireAfterDays: 0,
      holder: 'thumbnail temp test gc',
      resumable: resumable.service,
    });
    const report = await gc.run();
    assert.ok(report.tempFilesRemoved >= 1);
    assert.equal(await fsPromises.stat(leftover).catch(() => null), null);
    await thumbs.delete('ab'.repeat(32));
  });
});
