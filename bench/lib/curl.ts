import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { CHUNK } from './http-client.js';
import { payload } from './measure.js';

/*
 * The byte figures are taken with curl, one process per transfer, as the issue measured
 * them: a Node client in the bench process shares the two cores with the server and
 * reads at 0.4 to 0.7 GB/s, so it, not the server, would be what a download measures.
 */

interface CurlResult {
  status: number;
  bytes: number;
  body: string;
}

function curl(args: string[]): Promise<CurlResult> {
  return new Promise((resolve, reject) => {
    // The answer's body (when kept) then, on its own last line, the status and the bytes received.
    execFile('curl', ['-sS', '--noproxy', '*', '-w', '\n%{http_code} %{size_download}', ...args], { maxBuffer: 1024 * 1024 }, (error, stdout, stderr) => {
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT')
        return reject(new Error('curl is not installed: the byte figures need it (Debian: apt-get install curl)'));
      if (error) return reject(new Error(`curl ${args.join(' ')}: ${stderr || error.message}`));
      const cut = stdout.lastIndexOf('\n');
      const [status, bytes] = stdout
        .slice(cut + 1)
        .split(' ')
        .map(Number);
      resolve({ status: status!, bytes: bytes!, body: stdout.slice(0, cut) });
    });
  });
}

function headerArgs(headers: Record<string, string>): string[] {
  return Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
}

/** Writes `size` bytes of the bench's generated body to `file`, for curl to send. */
export async function writeBody(file: string, size: number): Promise<void> {
  await pipeline(payload(size, CHUNK), createWriteStream(file));
}

/** `POST /files` of a file on disk (multipart, as the API's clients send it); the Atom answer. */
export async function curlUpload(url: string, key: string, file: string): Promise<string> {
  const answer = await curl(['-H', `Authorization: ${key}`, '-F', `upload=@${file};type=application/octet-stream`, `${url}/files`]);
  if (answer.status !== 201) throw new Error(`upload answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return answer.body;
}

/** A WebDAV `PUT` of a file on disk (nginx's, or filehaven's /dav/ with its Basic `Authorization`). */
export async function curlPut(url: string, file: string, headers: Record<string, string> = {}): Promise<void> {
  const answer = await curl(['-o', '/dev/null', ...headerArgs(headers), '-T', file, url]);
  if (answer.status !== 201 && answer.status !== 204) throw new Error(`PUT answered ${answer.status}`);
}

/** A download, counted and dropped; fails unless it is a 200 of `expected` bytes. */
export async function curlGet(url: string, expected: number, headers: Record<string, string> = {}): Promise<void> {
  const answer = await curl(['-o', '/dev/null', ...headerArgs(headers), url]);
  if (answer.status !== 200 || answer.bytes !== expected) throw new Error(`GET ${url}: ${answer.status}, ${answer.bytes} of ${expected} bytes`);
}
