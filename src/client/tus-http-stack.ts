import type { FileSource, HttpRequest, HttpResponse, HttpStack, SliceResult } from 'tus-js-client';
import type { ApiConnection } from './api-connection.js';
import { FilehavenConnectionError } from './client-errors.js';
import type { UploadSource } from './upload-source.js';

/*
 * The two seams of tus-js-client (its `httpStack` and `fileReader` options) filled with
 * the SDK's own parts, so a tus upload travels like every other call: through
 * ApiConnection.send (the client's fetch, transport failures named after the server, an
 * abort that rethrows its reason) and from an UploadSource (a file read again from any
 * byte, never held in memory). tus-js-client keeps the protocol: creation, HEAD, PATCH,
 * retries, the URL storage.
 */

/** A PATCH body: `size` bytes read as the socket takes them. */
export interface BodySlice {
  size: number;
  bytes: AsyncIterable<Uint8Array>;
}

/** tus-js-client's `fileReader` for an UploadSource with `readRange`: one slice per PATCH, read from disk as it is sent. */
export const uploadSourceReader = {
  async openFile(input: UploadSource): Promise<FileSource> {
    const { size, readRange } = input;
    if (size === undefined || readRange === undefined)
      throw new TypeError('a tus upload needs a source of known size that can be read again (a file or a Blob)');
    return {
      size,
      async slice(start: number, end: number): Promise<SliceResult> {
        const stop = Math.min(end, size);
        // Also a source of its own: in a parallel upload (tus concatenation) each partial
        // upload opens its slice with this reader again and PATCHes it in chunks.
        const value: BodySlice & Pick<UploadSource, 'size' | 'readRange'> = {
          size: stop - start,
          bytes: readRange(start, stop),
          readRange: (from, to) => readRange(start + from, start + Math.min(to, stop - start)),
        };
        return { value, done: stop >= size };
      },
      close() {},
    };
  },
};

/** tus-js-client's `httpStack` over ApiConnection.send; `signal` (the call's and the client's) ends every request. */
export class ConnectionHttpStack implements HttpStack {
  constructor(
    private readonly connection: ApiConnection,
    private readonly signal: AbortSignal | undefined,
  ) {}

  createRequest(method: string, url: string): HttpRequest {
    return new ConnectionRequest(this.connection, method, url, this.signal);
  }

  getName(): string {
    return 'filehaven ApiConnection';
  }
}

class ConnectionRequest implements HttpRequest {
  private readonly headers: Record<string, string> = {};
  private readonly controller = new AbortController();
  private onProgress: (bytesSent: number) => void = () => {};

  constructor(
    private readonly connection: ApiConnection,
    private readonly method: string,
    private readonly url: string,
    private readonly signal: AbortSignal | undefined,
  ) {}

  getMethod(): string {
    return this.method;
  }

  getURL(): string {
    return this.url;
  }

  setHeader(header: string, value: string): void {
    this.headers[header] = value;
  }

  getHeader(header: string): string | undefined {
    return this.headers[header];
  }

  setProgressHandler(handler: (bytesSent: number) => void): void {
    this.onProgress = handler;
  }

  async send(body: BodySlice | null = null): Promise<HttpResponse> {
    const signal = this.signal ? AbortSignal.any([this.signal, this.controller.signal]) : this.controller.signal;
    let data: AsyncIterable<Uint8Array> | undefined;
    if (body) {
      // Kept on the request: an error names the size of what a proxy refused.
      this.headers['Content-Length'] = String(body.size);
      data = counted(body.bytes, this.onProgress);
    }
    const headers = { ...this.headers };
    // As ApiConnection.call: duplex 'half' for a streamed body, and redirect 'error' so
    // fetch never tees the body into a branch nobody reads (which would hold it all).
    const init = { method: this.method, headers, body: data, signal, duplex: 'half', redirect: 'error' } as RequestInit;
    const response = await this.connection.send(this.url, init);
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw new FilehavenConnectionError(`the answer from ${new URL(this.url).origin} was cut off`, { cause: error });
    }
    return new ConnectionResponse(response, text);
  }

  async abort(): Promise<void> {
    this.controller.abort(new Error('tus: request aborted'));
  }

  getUnderlyingObject(): unknown {
    return undefined;
  }
}

/** An answer, its body read: `getUnderlyingObject()` is the fetch Response (status and headers). */
class ConnectionResponse implements HttpResponse {
  constructor(
    private readonly response: Response,
    private readonly body: string,
  ) {}

  getStatus(): number {
    return this.response.status;
  }

  getHeader(header: string): string | undefined {
    return this.response.headers.get(header) ?? undefined;
  }

  getBody(): string {
    return this.body;
  }

  getUnderlyingObject(): Response {
    return this.response;
  }
}

/** The bytes as they are taken by the request, counted for tus-js-client's progress. */
async function* counted(bytes: AsyncIterable<Uint8Array>, onProgress: (sent: number) => void): AsyncIterable<Uint8Array> {
  let sent = 0;
  for await (const chunk of bytes) {
    yield chunk;
    sent += chunk.length;
    onProgress(sent);
  }
}
