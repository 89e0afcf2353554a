import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { TestServer } from './server.js';

/** Helpers for the download, direct-link and traffic tests (test/http/downloads-*.test.ts). */

export const sha256 = (data: Buffer | Uint8Array) => createHash('sha256').update(data).digest('hex');

/** Random bytes, so a wrong offset or a truncated body cannot match by accident. */
export const randomPayload = (size: number) => randomBytes(size);

/** The whole body of a response as a Buffer. */
export async function bodyBytes(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}

/** `premium_trafficLeft` of GET /account for this key. */
export async function trafficLeft(t: TestServer, key: string): Promise<number> {
  const response = await t.fetch('/account', { headers: { Authorization: key } });
  const body = await response.text();
  assert.equal(response.status, 200, body);
  const match = /<ed:premium_trafficLeft>(-?\d+)<\/ed:premium_trafficLeft>/.exec(body);
  assert.ok(match, `no premium_trafficLeft in ${body}`);
  return Number(match[1]);
}

/** The direct URL of GET /files/<id>;DirectLink, asserting a 200. */
export async function directLink(t: TestServer, key: string, id: string): Promise<string> {
  const response = await t.fetch(`/files/${id};DirectLink`, { headers: { Authorization: key } });
  const body = await response.text();
  assert.equal(response.status, 200, body);
  const href = /<link href="([^"]+)" rel="enclosure"/.exec(body)?.[1];
  assert.ok(href, `no enclosure link in ${body}`);
  return href.replace(/&amp;/g, '&');
}

const quoted = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * Uploads with a hand-written multipart body, so the part's filename reaches the server
 * exactly (FormData percent-encodes `"`); the name is sent as a quoted string in raw UTF-8.
 */
export async function uploadNamed(t: TestServer, key: string, name: string, content: Buffer | string) {
  const boundary = `----filehaven${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename=${quoted(name)}\r\nContent-Type: application/octet-stream\r\n\r\n`,
      'utf8',
    ),
    Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8'),
    Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8'),
  ]);
  const response = await t.fetch('/files', {
    method: 'POST',
    headers: { Authorization: key, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    body,
  });
  const text = await response.text();
  assert.equal(response.status, 201, text);
  const id = /<entry>\s*<id>([^<]+)<\/id>/.exec(text)?.[1] ?? '';
  const downloadLink = (/title="download_link" href="([^"]+)"/.exec(text)?.[1] ?? '').replace(/&amp;/g, '&');
  return { id, downloadLink, body: text };
}

/**
 * Starts a GET with node:http, reads the status and the first body chunk, then destroys
 * the request (a client that gives up mid-download). Returns what it saw.
 */
export function startAndAbort(url: string, headers: Record<string, string>): Promise<{ status: number; received: number }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (response) => {
      response.once('data', (chunk: Buffer) => {
        const status = response.statusCode ?? 0;
        request.destroy();
        resolve({ status, received: chunk.length });
      });
      response.once('end', () => reject(new Error('the whole body arrived before the abort')));
    });
    request.on('error', (error) => {
      // The destroy above surfaces as an error on some Node versions: ignore it then.
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error);
    });
  });
}

/** Polls `probe` until it returns true, failing after `attempts` tries; for asynchronous effects. */
export async function eventually(probe: () => Promise<boolean>, what: string, attempts = 200): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`never happened: ${what}`);
}

/**
 * A request through node:http. Used for conditional requests: fetch() adds
 * `Cache-Control: no-cache` to any request with If-None-Match or If-Modified-Since,
 * which makes the server (via `fresh`) answer 200 instead of 304.
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method ?? 'GET', headers: options.headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}
