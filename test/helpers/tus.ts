import http from 'node:http';
import type { TestServer } from './server.js';

/*
 * A tus 1.0 client written from the protocol (https://tus.io/protocols/resumable-upload),
 * as bare as curl: the tests see every header and status the server sends.
 */

export const TUS = { 'Tus-Resumable': '1.0.0' } as const;
export const OFFSET_STREAM = 'application/offset+octet-stream';

/** An Upload-Metadata value: keys with base64 values. */
export function uploadMetadata(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([key, value]) => `${key} ${Buffer.from(value, 'utf8').toString('base64')}`)
    .join(',');
}

export interface Created {
  response: Response;
  body: string;
  /** The upload's id (the last segment of Location), '' when none was created. */
  id: string;
}

/** POST /uploads: creation, with the body as creation-with-upload when given. */
export async function createUpload(
  t: TestServer,
  key: string | null,
  options: { length: number | null; metadata?: Record<string, string>; body?: Buffer; headers?: Record<string, string> },
): Promise<Created> {
  // A null length sends no Upload-Length (a deferred length, which this server refuses).
  const headers: Record<string, string> = { ...TUS, ...(options.length === null ? {} : { 'Upload-Length': String(options.length) }), ...options.headers };
  if (key !== null) headers.Authorization = key;
  if (options.metadata) headers['Upload-Metadata'] = uploadMetadata(options.metadata);
  if (options.body) headers['Content-Type'] = OFFSET_STREAM;
  const response = await t.fetch('/uploads', { method: 'POST', headers, body: options.body ? new Uint8Array(options.body) : undefined });
  const body = await response.text();
  const location = response.headers.get('location') ?? '';
  return { response, body, id: location.startsWith(`${t.url}/uploads/`) ? location.slice(`${t.url}/uploads/`.length) : '' };
}

/** PATCH /uploads/<id> with the whole body at once. */
export async function patchUpload(
  t: TestServer,
  key: string | null,
  id: string,
  offset: number,
  body: Buffer,
  headers: Record<string, string> = {},
): Promise<{ response: Response; body: string }> {
  const all: Record<string, string> = { ...TUS, 'Upload-Offset': String(offset), 'Content-Type': OFFSET_STREAM, ...headers };
  if (key !== null) all.Authorization = key;
  const response = await t.fetch(`/uploads/${id}`, { method: 'PATCH', headers: all, body: new Uint8Array(body) });
  return { response, body: await response.text() };
}

/** HEAD /uploads/<id>. */
export function headUpload(t: TestServer, key: string | null, id: string): Promise<Response> {
  return t.fetch(`/uploads/${id}`, { method: 'HEAD', headers: key === null ? { ...TUS } : { ...TUS, Authorization: key } });
}

/** DELETE /uploads/<id> (termination). */
export function deleteUpload(t: TestServer, key: string, id: string): Promise<Response> {
  return t.fetch(`/uploads/${id}`, { method: 'DELETE', headers: { ...TUS, Authorization: key } });
}

/** The offset HEAD reports; throws on anything but 200. */
export async function offsetOf(t: TestServer, key: string, id: string): Promise<number> {
  const head = await headUpload(t, key, id);
  if (head.status !== 200) throw new Error(`HEAD answered ${head.status}`);
  return Number(head.headers.get('upload-offset'));
}

/** A whole file through tus in `chunk`-byte PATCHes; the last answer. */
export async function uploadInChunks(
  t: TestServer,
  key: string,
  name: string,
  content: Buffer,
  chunk: number,
  metadata: Record<string, string> = {},
): Promise<{ id: string; response: Response; body: string }> {
  const created = await createUpload(t, key, { length: content.length, metadata: { filename: name, ...metadata } });
  if (created.response.status !== 201) return { id: '', response: created.response, body: created.body };
  let last: { response: Response; body: string } | null = null;
  for (let offset = 0; offset < content.length; offset += chunk) {
    last = await patchUpload(t, key, created.id, offset, content.subarray(offset, offset + chunk));
    if (last.response.status >= 300) break;
  }
  return { id: created.id, ...last! };
}

/** What a raw PATCH got: an answer, or a connection that ended without one. */
export type RawOutcome = { kind: 'answer'; status: number; headers: http.IncomingHttpHeaders; body: string } | { kind: 'cut'; error: string };

/**
 * A PATCH whose body the test sends piece by piece over a plain socket, declaring
 * `length` bytes: the server sees a client that is slow, stalls, or goes away.
 */
export function streamedPatch(
  url: string,
  key: string,
  id: string,
  offset: number,
  length: number,
): { write(piece: Buffer): Promise<void>; end(): void; destroy(): void; outcome: Promise<RawOutcome> } {
  const target = new URL(`/uploads/${id}`, url);
  let request!: http.ClientRequest;
  const outcome = new Promise<RawOutcome>((resolve) => {
    request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'PATCH',
        agent: false,
        headers: { ...TUS, Authorization: key, 'Upload-Offset': String(offset), 'Content-Type': OFFSET_STREAM, 'Content-Length': String(length) },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ kind: 'answer', status: response.statusCode ?? 0, headers: response.headers, body }));
        response.on('error', (error) => resolve({ kind: 'cut', error: error.message }));
      },
    );
    request.on('error', (error) => resolve({ kind: 'cut', error: error.message }));
  });
  return {
    write: (piece) =>
      new Promise((resolve) => {
        if (request.destroyed) return resolve();
        if (request.write(piece)) resolve();
        else request.once('drain', () => resolve());
        request.once('close', () => resolve());
      }),
    end: () => request.end(),
    destroy: () => request.destroy(),
    outcome,
  };
}
