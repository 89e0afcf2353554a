import type { BenchContext } from '../lib/context.js';
import { figure, type SectionResult } from '../lib/figures.js';
import { atomEntryId, atomLink, directLink, download, uploadFile } from '../lib/http-client.js';
import { MiB, rssPeak, timed } from '../lib/measure.js';

const MB = 1e6;

/**
 * Peak resident memory of the server while 4 uploads and 4 downloads of `size` bytes run
 * at once, beside one slow reader (a direct download read at 1 MB/s, which the server
 * must not buffer for). Sampled every 20 ms from /proc.
 */
export async function memory(context: BenchContext, size: number): Promise<SectionResult> {
  const { server, key } = context;
  const stored = (await uploadFile(server.url, key, { size }, 'concurrent.bin')).body;
  const link = atomLink(stored, 'download_link');
  const id = atomEntryId(stored);
  if (!link || !id) throw new Error(`no link in ${stored}`);
  const slowHref = await directLink(server.url, key, id);
  const halfHrefs = [await directLink(server.url, key, id), await directLink(server.url, key, id)];

  const slowReader = new AbortController();
  const auth = { Authorization: key };
  // Its failure is looked at once the others are done (an early rejection must not go unhandled).
  const slow = download(slowHref, size, { pace: 1 * MB, signal: slowReader.signal, headers: auth }).then(
    () => null,
    (error: Error) => (slowReader.signal.aborted ? null : error),
  );
  const sampler = rssPeak(server.pid);
  const seconds = await timed(() =>
    Promise.all([
      ...[0, 1, 2, 3].map((i) => uploadFile(server.url, key, { size }, `concurrent-${i}.bin`)),
      download(`${link}?download=1`, size),
      download(`${link}?download=1`, size),
      ...halfHrefs.map((href) => download(href, size, { headers: auth })),
    ]),
  );
  const peak = sampler.stop();
  slowReader.abort();
  const slowFailure = await slow;
  if (slowFailure) throw slowFailure;
  const target = 150 * MB;
  return {
    title: 'Memory',
    figures: [
      figure(`peak RSS, 4 uploads + 4 downloads of ${(size / MiB).toFixed(0)} MiB at once + 1 slow reader`, `${(peak / MB).toFixed(0)} MB`, {
        target: '≤ 150 MB',
        met: peak <= target,
      }),
    ],
    notes: [
      `the eight transfers took ${seconds.toFixed(1)} s (${((8 * size) / MB / seconds).toFixed(0)} MB/s in all); 2 of the downloads by public link, 2 by direct link`,
    ],
  };
}
