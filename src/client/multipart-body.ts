import { randomBytes } from 'node:crypto';
import type { UploadSource } from './upload-source.js';

/** A multipart/form-data request body streamed from an UploadSource. */
export interface MultipartBody {
  /** `multipart/form-data; boundary=...` */
  contentType: string;
  /** Total bytes, when the source's size is known. */
  length: number | undefined;
  /** The body: head, the source's bytes as they are read, tail. */
  chunks: AsyncIterable<Uint8Array>;
}

/**
 * The filename as a quoted string in raw UTF-8, as the server reads it (API.md 2); `"`
 * and `\` escaped, line breaks dropped (they would end the part header).
 */
const quotedName = (name: string) => `"${name.replace(/[\r\n]+/g, ' ').replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * The one file part named `upload` of SPEC.md's POST /files. The body is built around
 * the source's stream, so its length is known without reading the file (Content-Length
 * lets the server refuse early), and it holds one chunk at a time. `fields` (such as
 * `expires_in`) go before the file, so the server knows them before the first byte.
 */
export function multipartBody(source: UploadSource, onChunk: (bytes: number) => void, fields: Record<string, string> = {}): MultipartBody {
  const boundary = `----filehaven-${randomBytes(12).toString('hex')}`;
  const fieldParts = Object.entries(fields)
    .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name=${quotedName(name)}\r\n\r\n${value}\r\n`)
    .join('');
  const head = Buffer.from(
    `${fieldParts}--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename=${quotedName(source.name)}\r\nContent-Type: application/octet-stream\r\n\r\n`,
    'utf8',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8');
  async function* chunks(): AsyncIterable<Uint8Array> {
    yield head;
    for await (const chunk of source.open()) {
      yield chunk;
      onChunk(chunk.byteLength);
    }
    yield tail;
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: source.size === undefined ? undefined : head.length + source.size + tail.length,
    chunks: chunks(),
  };
}
