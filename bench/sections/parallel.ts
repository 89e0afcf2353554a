import { createReadStream } from 'node:fs';
import path from 'node:path';
import { DefaultHttpStack, type HttpRequest, Upload } from 'tus-js-client';
import { startCappedProxy } from '../lib/capped-proxy.js';
import type { BenchContext } from '../lib/context.js';
import { writeBody } from '../lib/curl.js';
import { type Figure, figure, rate, type SectionResult, x } from '../lib/figures.js';
import { alternate, MiB, mbps, median, timed } from '../lib/measure.js';

/** The connections of the parallel upload, as the CLI and the web uploader use for large files. */
const CONNECTIONS = 4;

/**
 * Parallel uploads (issue 28, target 3): one file over one tus connection against the same
 * file over four (tus concatenation, tus-js-client's `parallelUploads`), A/B alternating.
 * Through a proxy that caps each connection at `cap` bytes/s (a long-distance TCP
 * connection), four should reach three times one; with no cap, four should never be
 * slower than one.
 */
export async function parallelUploads(context: BenchContext, options: { cappedSize: number; size: number; cap: number }): Promise<SectionResult> {
  const figures: Figure[] = [];
  const notes: string[] = [];
  const target = new URL(context.server.url);

  const capped = await startCappedProxy(target, options.cap);
  try {
    const body = path.join(context.work, `parallel-${options.cappedSize}.bin`);
    await writeBody(body, options.cappedSize);
    // A capped upload takes seconds: three rounds are enough to see the ratio.
    const rounds = Math.min(context.rounds, 3);
    const samples = await alternate(rounds, {
      one: () => timed(() => tusUpload(context, capped.url, body, 1)),
      many: () => timed(() => tusUpload(context, capped.url, body, CONNECTIONS)),
    });
    const one = mbps(options.cappedSize, median(samples.one));
    const many = mbps(options.cappedSize, median(samples.many));
    const label = `${(options.cappedSize / MiB).toFixed(0)} MiB`;
    figures.push(
      figure(`upload ${label} through ${rate(options.cap / 1e6)} per connection, ${CONNECTIONS} connections`, rate(many), {
        reference: `${rate(one)} one connection`,
        ratio: x(many / one),
        target: '≥ 3×',
        met: many / one >= 3,
      }),
    );
  } finally {
    await capped.close();
  }

  const body = path.join(context.work, `parallel-${options.size}.bin`);
  await writeBody(body, options.size);
  const samples = await alternate(context.rounds, {
    one: () => timed(() => tusUpload(context, context.server.url, body, 1)),
    many: () => timed(() => tusUpload(context, context.server.url, body, CONNECTIONS)),
  });
  const one = mbps(options.size, median(samples.one));
  const many = mbps(options.size, median(samples.many));
  figures.push(
    figure(`upload ${(options.size / MiB).toFixed(0)} MiB, no cap, ${CONNECTIONS} connections`, rate(many), {
      reference: `${rate(one)} one connection`,
      ratio: x(many / one),
      target: '≥ 1× (never slower)',
      met: many / one >= 0.95,
    }),
  );
  notes.push(
    `tus-js-client in the bench's process, one PATCH per part; ${CONNECTIONS} connections are ${CONNECTIONS} partial uploads and a final one (tus concatenation); the file is hashed and made after the last part.`,
  );
  return { title: 'Parallel uploads (tus concatenation)', figures, notes };
}

/** Uploads `file` with tus-js-client over `connections` connections, every request sent to `origin` (the proxy). */
function tusUpload(context: BenchContext, origin: string, file: string, connections: number): Promise<void> {
  const stack = new DefaultHttpStack({});
  // The server names its own URLs (under base_url): requests go to `origin` all the same.
  const httpStack = {
    createRequest: (method: string, url: string): HttpRequest => {
      const parsed = new URL(url);
      return stack.createRequest(method, `${origin}${parsed.pathname}${parsed.search}`);
    },
    getName: () => 'ViaProxy',
  };
  return new Promise<void>((resolve, reject) => {
    const upload = new Upload(createReadStream(file), {
      endpoint: `${origin}/uploads`,
      headers: { Authorization: `Bearer ${context.key}` },
      metadata: { filename: path.basename(file) },
      parallelUploads: connections,
      retryDelays: [],
      storeFingerprintForResuming: false,
      httpStack,
      onError: reject,
      onSuccess: ({ lastResponse }) => {
        if (lastResponse.getHeader('Filehaven-File-Id')) resolve();
        else reject(new Error(`the upload ended without a file (status ${lastResponse.getStatus()})`));
      },
    });
    upload.start();
  });
}
