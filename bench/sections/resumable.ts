import { createHash, randomInt } from 'node:crypto';
import { createReadStream } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSHA256 } from 'hash-wasm';
import type { BenchContext } from '../lib/context.js';
import { curlUpload, writeBody } from '../lib/curl.js';
import { type Figure, figure, rate, type SectionResult, x } from '../lib/figures.js';
import { filehavenCli, launchFilehaven } from '../lib/filehaven-server.js';
import { alternate, MiB, mbps, median, timed } from '../lib/measure.js';

const TUS = { 'Tus-Resumable': '1.0.0' };

/**
 * Resumable uploads (issue 11): the SHA-256 that can save its state (hash-wasm) against
 * Node's own; an upload through tus (one PATCH, and PATCHes of 64 MiB) against POST
 * /files, A/B alternating; and a `killSize` upload whose server is killed (SIGKILL) at
 * random points three times, resumed each time, checked by its digest.
 */
export async function resumable(context: BenchContext, size: number, killSize: number): Promise<SectionResult> {
  const { server, key } = context;
  const figures: Figure[] = [];
  const notes: string[] = [];

  // The hashes, in this process, over 256 MiB in 1 MiB chunks.
  const chunk = Buffer.alloc(MiB, 7);
  const hashRounds = await alternate(context.rounds, {
    wasm: () =>
      timed(async () => {
        const hasher = await createSHA256();
        hasher.init();
        for (let i = 0; i < 256; i++) hasher.update(chunk);
        hasher.digest('hex');
      }),
    native: () =>
      timed(async () => {
        const hash = createHash('sha256');
        for (let i = 0; i < 256; i++) hash.update(chunk);
        hash.digest('hex');
      }),
  });
  const wasm = mbps(256 * MiB, median(hashRounds.wasm));
  const native = mbps(256 * MiB, median(hashRounds.native));
  figures.push(figure('SHA-256 whose state can be saved (hash-wasm)', rate(wasm), { reference: `${rate(native)} node:crypto`, ratio: x(wasm / native) }));

  // Uploads: POST /files against tus.
  const body = path.join(context.work, `resumable-${size}.bin`);
  await writeBody(body, size);
  const samples = await alternate(context.rounds, {
    post: () => timed(() => curlUpload(server.url, key, body)),
    tus: () => timed(() => tusUpload(server.url, key, body, size, size)),
    tusChunks: () => timed(() => tusUpload(server.url, key, body, size, 64 * MiB)),
  });
  const post = mbps(size, median(samples.post));
  const label = `${(size / MiB).toFixed(0)} MiB`;
  for (const [name, what] of [
    ['tus', `upload ${label}, tus, one PATCH`],
    ['tusChunks', `upload ${label}, tus, PATCHes of 64 MiB`],
  ] as const) {
    const value = mbps(size, median(samples[name]));
    figures.push(figure(what, rate(value), { reference: `${rate(post)} POST /files`, ratio: x(value / post) }));
  }

  // The kill test: a separate server on the same storage, killed mid-PATCH three times.
  const big = path.join(context.work, `resumable-kill-${killSize}.bin`);
  await writeBody(big, killSize);
  const expected = await fileSha256(big);
  let victim = await launchFilehaven(context.dataDir, context.settings);
  const history: string[] = [];
  let reread = 0;
  const started = performance.now();
  try {
    const id = await createTus(victim.url, key, killSize, 'kill-test.bin');
    let offset = 0;
    for (let kill = 0; kill < 3; kill++) {
      // Handled at once: the kill resets the connection while this awaits other things.
      const patch = patchFrom(victim.url, key, id, big, offset, killSize).catch(() => null);
      await sleep(randomInt(800, 2500));
      reread += await rereadBytes(victim.url);
      await victim.kill();
      await patch;
      victim = await launchFilehaven(context.dataDir, context.settings);
      const kept = await headOffset(victim.url, key, id);
      history.push(`${(offset / MiB).toFixed(0)} → ${(kept / MiB).toFixed(0)} MiB`);
      offset = kept;
    }
    const answer = await patchFrom(victim.url, key, id, big, offset, killSize);
    if (answer.status !== 204) throw new Error(`the last PATCH answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    reread += await rereadBytes(victim.url);
    const seconds = (performance.now() - started) / 1000;
    const fileId = answer.fileId;
    const info = JSON.parse(filehavenCli(context.dataDir, context.settings, 'files', 'info', fileId, '--json')) as { sha256: string };
    const right = info.sha256 === expected;
    figures.push(
      figure(`upload ${(killSize / MiB).toFixed(0)} MiB, server killed 3 times mid-PATCH and resumed`, right ? 'right SHA-256' : 'WRONG SHA-256', {
        reference: `${seconds.toFixed(1)} s in all, restarts included; ${(reread / MiB).toFixed(0)} MiB read again for the digest`,
        met: right,
      }),
    );
    notes.push(`kill test offsets (sent from → kept after the kill): ${history.join(', ')}`);
  } finally {
    await victim.stop();
  }
  notes.push(`${context.rounds} rounds, A/B alternating, medians; curl for POST /files and one-PATCH tus, Node's http for 64 MiB PATCHes`);
  return { title: 'Resumable uploads', figures, notes };
}

function request(
  url: string,
  method: string,
  headers: Record<string, string | number>,
  body?: NodeJS.ReadableStream,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (piece: string) => (text += piece));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body) body.pipe(req);
    else req.end();
  });
}

async function createTus(url: string, key: string, size: number, name: string): Promise<string> {
  const answer = await request(`${url}/uploads`, 'POST', {
    ...TUS,
    Authorization: key,
    'Upload-Length': size,
    'Upload-Metadata': `filename ${Buffer.from(name).toString('base64')}`,
  });
  if (answer.status !== 201 || typeof answer.headers.location !== 'string') throw new Error(`creation answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return answer.headers.location.split('/').at(-1)!;
}

async function patchFrom(
  url: string,
  key: string,
  id: string,
  file: string,
  offset: number,
  size: number,
  end = size,
): Promise<{ status: number; body: string; fileId: string }> {
  const answer = await request(
    `${url}/uploads/${id}`,
    'PATCH',
    { ...TUS, Authorization: key, 'Upload-Offset': offset, 'Content-Type': 'application/offset+octet-stream', 'Content-Length': end - offset },
    end > offset ? createReadStream(file, { start: offset, end: end - 1, highWaterMark: MiB }) : Readable.from([]),
  );
  return { status: answer.status, body: answer.body, fileId: String(answer.headers['filehaven-file-id'] ?? '') };
}

async function tusUpload(url: string, key: string, file: string, size: number, step: number): Promise<void> {
  const id = await createTus(url, key, size, 'bench.bin');
  for (let offset = 0; offset < size; offset += step) {
    const answer = await patchFrom(url, key, id, file, offset, size, Math.min(size, offset + step));
    // tus 1.0: 204 for every PATCH, the last too (its headers name the file).
    if (answer.status !== 204) throw new Error(`PATCH at ${offset} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  }
}

async function headOffset(url: string, key: string, id: string): Promise<number> {
  const answer = await request(`${url}/uploads/${id}`, 'HEAD', { ...TUS, Authorization: key });
  if (answer.status !== 200) throw new Error(`HEAD answered ${answer.status}`);
  return Number(answer.headers['upload-offset']);
}

async function rereadBytes(url: string): Promise<number> {
  const answer = await request(`${url}/metrics`, 'GET', {});
  const match = /^filehaven_resumable_digest_reread_bytes_total (\d+)/m.exec(answer.body);
  return match ? Number(match[1]) : 0;
}

async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const piece of createReadStream(file, { highWaterMark: MiB })) hash.update(piece as Buffer);
  return hash.digest('hex');
}
