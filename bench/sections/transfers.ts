import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import type { BenchContext } from '../lib/context.js';
import { curlGet, curlPut, curlUpload, writeBody } from '../lib/curl.js';
import { type Figure, figure, rate, type SectionResult, x } from '../lib/figures.js';
import { atomEntryId, atomLink, directLink, put, uploadFile } from '../lib/http-client.js';
import { alternate, MiB, mbps, median, timed } from '../lib/measure.js';
import { startBareNodeWriter, startBareS3Writer } from '../lib/platform-floor.js';

/**
 * Upload and download of one file, through the API (POST /files, the download links) and
 * through WebDAV (PUT and GET on /dav/, issue 27), A/B alternating with the references:
 * nginx (WebDAV PUT, then an fsync of the file as filehaven does before it answers;
 * sendfile for the download) and, on postgres-s3, the raw S3 upload and GetObject.
 */
export async function transfers(context: BenchContext, size: number): Promise<SectionResult> {
  const { server, login, key, nginx, s3 } = context;
  const notes: string[] = [];
  const contestants: Record<string, () => Promise<number>> = {};

  // The bytes every upload sends, written once to the run's scratch folder.
  const body = path.join(context.work, `body-${size}.bin`);
  await writeBody(body, size);
  let lastUpload = '';
  contestants.upload = () =>
    timed(async () => {
      lastUpload = await curlUpload(server.url, key, body);
    });
  // One stored file for the downloads, uploaded before any is timed.
  const stored = (await uploadFile(server.url, key, { size }, 'download-me.bin')).body;
  const publicLink = atomLink(stored, 'download_link');
  const fileId = atomEntryId(stored);
  if (!publicLink || !fileId) throw new Error(`no download link or id in ${stored}`);
  contestants.public = () => timed(() => curlGet(`${publicLink}?download=1`, size));
  contestants.direct = async () => {
    const href = await directLink(server.url, key, fileId);
    return timed(() => curlGet(href, size, { Authorization: key }));
  };
  // WebDAV: the same bytes to one path again and again (each PUT after the first replaces
  // the file, 204), and a file put there once, untimed, for the GETs.
  const davAuth = { Authorization: `Basic ${Buffer.from(`${login}:${key}`).toString('base64')}` };
  contestants.davPut = () => timed(() => curlPut(`${server.url}/dav/put-me.bin`, body, davAuth));
  await curlPut(`${server.url}/dav/get-me.bin`, body, davAuth);
  contestants.davGet = () => timed(() => curlGet(`${server.url}/dav/get-me.bin`, size, davAuth));

  if ('url' in nginx) {
    const putPath = path.join(nginx.root, 'put.bin');
    contestants.nginxPut = async () => {
      await rm(putPath, { force: true });
      return timed(async () => {
        await curlPut(`${nginx.url}/put.bin`, body);
        const file = await open(putPath, 'r');
        try {
          await file.sync();
        } finally {
          await file.close();
        }
      });
    };
    if (context.backend === 'local') {
      // The platform's own ceiling for the same job, in the same run (platform-floor.ts).
      const bare = await startBareNodeWriter(context.work);
      contestants.bareNode = () => timed(() => curlPut(`${bare.url}/put`, body));
      contestants.bareNodeHash = () => timed(() => curlPut(`${bare.url}/put?hash`, body));
    }
    // The file nginx serves, written (untimed) once.
    await put(`${nginx.url}/get.bin`, size);
    contestants.nginxGet = () => timed(() => curlGet(`${nginx.url}/get.bin`, size));
  } else {
    notes.push(nginx.missing);
  }
  if (s3) {
    contestants.s3Upload = () => s3.upload(size);
    contestants.s3Read = () => s3.read(size);
    // The platform's ceiling on S3: receive over HTTP, hash, multipart upload; nothing else.
    const flag = (name: string) => context.settings.flags[context.settings.flags.indexOf(name) + 1]!;
    const bare = await startBareS3Writer({
      endpoint: flag('--s3-endpoint'),
      bucket: flag('--s3-bucket'),
      partSize: Number(flag('--s3-part-size')),
      queueSize: Number(flag('--s3-queue-size')),
      env: context.settings.env,
    });
    contestants.bareS3Hash = () => timed(() => curlPut(`${bare.url}/put`, body));
  }

  const samples = await alternate(context.rounds, contestants);
  if (!lastUpload.includes('<entry>')) throw new Error(`the last upload answered ${lastUpload}`);
  const speed = (name: string) => (samples[name] ? mbps(size, median(samples[name]!)) : undefined);
  const figures: Figure[] = [];
  const line = (what: string, name: string, reference: string | undefined, referenceName: string, target?: number) => {
    const value = speed(name)!;
    const base = reference ? speed(reference) : undefined;
    const ratio = base ? value / base : undefined;
    figures.push(
      figure(what, rate(value), {
        reference: base ? `${rate(base)} ${referenceName}` : '',
        ratio: ratio ? x(ratio) : '',
        target: target && base ? `≥ ${target}×` : '',
        met: target && ratio ? ratio >= target : null,
      }),
    );
  };
  const sizeLabel = `${(size / MiB).toFixed(0)} MiB`;
  // The targets are set against local disk; on S3 the nginx ratio is shown for scale, and
  // the raw S3 reference says what the object store allows.
  const local = context.backend === 'local';
  line(`upload ${sizeLabel}, POST /files`, 'upload', 'nginxPut', 'nginx PUT + fsync', local ? 0.8 : undefined);
  line(`upload ${sizeLabel}, WebDAV PUT`, 'davPut', 'nginxPut', 'nginx PUT + fsync');
  if (samples.bareNode) {
    line(`upload ${sizeLabel}, bare node:http PUT + fsync (the platform)`, 'bareNode', 'nginxPut', 'nginx PUT + fsync');
    line(`upload ${sizeLabel}, bare node:http PUT + SHA-256 + fsync`, 'bareNodeHash', 'nginxPut', 'nginx PUT + fsync');
  }
  if (s3) {
    line(`upload ${sizeLabel}, bare node:http PUT + SHA-256 into an S3 multipart upload (the platform)`, 'bareS3Hash', 's3Upload', 'raw S3 multipart upload');
    line(`upload ${sizeLabel}, POST /files`, 'upload', 'bareS3Hash', 'bare node:http + SHA-256 + S3');
    line(`upload ${sizeLabel}, POST /files`, 'upload', 's3Upload', 'raw S3 multipart upload', 0.95);
    line(`upload ${sizeLabel}, WebDAV PUT`, 'davPut', 's3Upload', 'raw S3 multipart upload');
  }
  line(`download ${sizeLabel}, public link`, 'public', 'nginxGet', 'nginx sendfile', local ? 0.8 : undefined);
  line(`download ${sizeLabel}, direct link`, 'direct', 'nginxGet', 'nginx sendfile', local ? 0.8 : undefined);
  line(`download ${sizeLabel}, WebDAV GET`, 'davGet', 'nginxGet', 'nginx sendfile');
  if (s3) {
    line(`download ${sizeLabel}, public link`, 'public', 's3Read', 'raw S3 GetObject');
    line(`download ${sizeLabel}, direct link`, 'direct', 's3Read', 'raw S3 GetObject');
    line(`download ${sizeLabel}, WebDAV GET`, 'davGet', 's3Read', 'raw S3 GetObject');
  }
  notes.push(`${context.rounds} rounds, A/B alternating, medians; curl as the client of filehaven and nginx`);
  return { title: 'Bytes', figures, notes };
}
