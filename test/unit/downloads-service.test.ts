import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import type { ApiError } from '../../src/domain/errors.js';
import type { Account, FileRecord } from '../../src/domain/types.js';
import { DownloadCosts } from '../../src/downloads/download-costs.js';
import { DownloadsService } from '../../src/downloads/downloads-service.js';
import type { FolderArchiveService } from '../../src/downloads/folder-archive-service.js';
import type { Requester } from '../../src/downloads/requester.js';
import { FreeDownloads } from '../../src/limits/free-downloads.js';
import type { TrafficTransfer } from '../../src/services/reservations-service.js';

// The download use case alone, with its storage faked: what each requester's download
// costs, in which order it is charged and counted. The HTTP tests (test/http/downloads-*,
// limits-downloads, folder-zip, premium-race) prove the same through the routes, on
// every backend; the traffic rules themselves are test/contract/reservations.contract.ts's.

const file = { id: 'abcdefgh', name: 'a.bin', size: 10, sha256: '0'.repeat(64) } as FileRecord;
const account = { id: 7 } as Account;

/** A use case over fakes that record what it did. */
function harness(options: { trafficLeft?: number; countFails?: boolean } = {}) {
  const seen: string[] = [];
  let trafficLeft = options.trafficLeft ?? 1_000;
  const transfer = (bytes: number) =>
    ({
      progress: (sent: number) => seen.push(`progress ${sent}`),
      finish: async (sent: number) => {
        seen.push(`settle ${sent} of ${bytes}`);
      },
    }) as unknown as TrafficTransfer;
  const freeDownloads = new FreeDownloads({ perIp: 1, bytesPerSecond: null, refused: () => seen.push('refused') });
  const downloads = new DownloadsService({
    costs: new DownloadCosts({
      freeDownloads,
      reservations: {
        takeTraffic: async (accountId, bytes) => {
          if (bytes > trafficLeft) return null;
          trafficLeft -= bytes;
          seen.push(`reserve ${bytes} of account ${accountId}`);
          return transfer(bytes);
        },
      },
    }),
    bytes: { open: async (_file, range) => Readable.from([Buffer.from(range ? `${range.start}-${range.end}` : 'all')]) },
    archives: {} as FolderArchiveService,
    files: {
      recordDownload: async (id) => {
        if (options.countFails) throw new Error('database gone');
        seen.push(`count ${id}`);
      },
      recordBytesServed: async (id, bytes) => {
        seen.push(`served ${bytes} of ${id}`);
      },
    },
    metrics: {
      downloadStarted: (kind) => {
        seen.push(`meter ${kind}`);
        return (sent) => seen.push(`meter ${kind} ended at ${sent}`);
      },
    },
  });
  const logged: string[] = [];
  const request = (range?: string, purpose: 'download' | 'preview' = 'download') => {
    const gone = new AbortController();
    return { gone, options: { purpose, range, signal: gone.signal, log: (_error: unknown, message: string) => logged.push(message) } };
  };
  return { downloads, freeDownloads, seen, logged, request };
}

const publicLink: Requester = { link: 'public', address: '203.0.113.9' };
const directLink: Requester = { link: 'direct', account };
const requesters: Requester[] = [publicLink, directLink];

describe('DownloadsService.file', () => {
  test('a public download holds one of its address’s free slots from admission until the response is over', async () => {
    const h = harness();
    const first = h.request();
    await h.downloads.file(file, publicLink, first.options);
    assert.equal(h.freeDownloads.inProgress('203.0.113.9'), 1);
    await assert.rejects(h.downloads.file(file, publicLink, h.request().options), (error: ApiError) => error.status === 429);
    assert.deepEqual(h.seen, ['refused']);
    first.gone.abort();
    assert.equal(h.freeDownloads.inProgress('203.0.113.9'), 0);
    await h.downloads.file(file, publicLink, h.request().options);
  });

  test('a direct download takes no slot: its cost is the whole body of premium traffic, taken before the first byte, settled at the end', async () => {
    const h = harness();
    const download = await h.downloads.file(file, directLink, h.request().options);
    assert.equal(h.freeDownloads.inProgress('203.0.113.9'), 0);
    await download.begin(10);
    download.progress(4);
    download.end(6);
    download.end(6);
    assert.deepEqual(h.seen, [
      'reserve 10 of account 7',
      'count abcdefgh',
      'meter direct',
      'progress 4',
      'meter direct ended at 6',
      'settle 6 of 10',
      'served 6 of abcdefgh',
    ]);
  });

  test('a direct download without the traffic for its body is refused (403) before it is counted or metered', async () => {
    const h = harness({ trafficLeft: 5 });
    const download = await h.downloads.file(file, directLink, h.request().options);
    await assert.rejects(download.begin(10), (error: ApiError) => error.status === 403);
    assert.deepEqual(h.seen, []);
  });

  test('an empty body costs no traffic', async () => {
    const h = harness({ trafficLeft: 0 });
    const download = await h.downloads.file(file, directLink, h.request().options);
    await download.begin(0);
    download.end(0);
    assert.deepEqual(h.seen, ['count abcdefgh', 'meter direct', 'meter direct ended at 0', 'served 0 of abcdefgh']);
  });

  test('a download is counted once, on the request that starts at byte 0; a preview never', async () => {
    for (const [range, purpose, counted] of [
      [undefined, 'download', true],
      ['bytes=0-', 'download', true],
      ['bytes=0-4', 'download', true],
      ['bytes=5-', 'download', false],
      ['bytes=-5', 'download', false],
      [undefined, 'preview', false],
    ] as const) {
      for (const requester of requesters) {
        const h = harness();
        const download = await h.downloads.file(file, requester, h.request(range, purpose).options);
        await download.begin(5);
        assert.equal(h.seen.includes('count abcdefgh'), counted, `${requester.link} ${purpose} ${range}`);
      }
    }
  });

  test('a failed count fails a free download, but never one whose traffic is taken: that one is logged and still settled', async () => {
    const free = harness({ countFails: true });
    const freeDownload = await free.downloads.file(file, publicLink, free.request().options);
    await assert.rejects(freeDownload.begin(10), /database gone/);
    assert.deepEqual(free.seen, []);

    const premium = harness({ countFails: true });
    const direct = await premium.downloads.file(file, directLink, premium.request().options);
    await direct.begin(10);
    direct.end(10);
    assert.deepEqual(premium.logged, ['counting a download failed']);
    assert.deepEqual(premium.seen, ['reserve 10 of account 7', 'meter direct', 'meter direct ended at 10', 'settle 10 of 10', 'served 10 of abcdefgh']);
  });

  test('the bytes are opened as asked (a range) and metered as a public download', async () => {
    const h = harness();
    const download = await h.downloads.file(file, publicLink, h.request('bytes=2-5').options);
    const body = await download.open({ start: 2, end: 5 });
    assert.equal(Buffer.concat(await body.toArray()).toString(), '2-5');
    await download.begin(4);
    download.end(4);
    assert.deepEqual(h.seen, ['meter public', 'meter public ended at 4', 'served 4 of abcdefgh']);
  });
});
