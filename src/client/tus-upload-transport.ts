import { createHash } from 'node:crypto';
import { DetailedError, type HttpResponse, Upload, type UploadOptions } from 'tus-js-client';
import { type ApiConnection, type CallOptions, refusalOf } from './api-connection.js';
import type { RequestUpload, StoredFile } from './api-types.js';
import { readFeed } from './atom-reader.js';
import { FilehavenApiError } from './client-errors.js';
import { targetOfUrl } from './download.js';
import { firstEntry, requestUpload, storedFile } from './entry-mappers.js';
import { ConnectionHttpStack, uploadSourceReader } from './tus-http-stack.js';
import type { UploadSource } from './upload-source.js';
import { EXPIRES_HEADER, type RequestDestination, requestHeaders, type UploadCall, type UploadTransport, withExpiry } from './upload-transport.js';
import { JsonFileUrlStorage } from './upload-url-storage.js';

/** The tus endpoint under {base_url}. */
export const TUS_PATH = '/uploads';

/**
 * Waits before each retry after a lost connection or a 5xx (tus-js-client retries those,
 * and 409/423, never another 4xx), in ms: about 19 s in all before the upload gives up.
 * A retry asks the server where it stands (HEAD) and sends only the rest.
 */
export const TUS_RETRY_DELAYS = [0, 1000, 3000, 5000, 10000];

/**
 * The header in which the server names the largest PATCH body to send (its
 * --upload-chunk-size): a proxy in front of the site may refuse bigger requests.
 */
export const MAX_CHUNK_SIZE_HEADER = 'Filehaven-Max-Chunk-Size';

/** Files of at least this many bytes go over several connections at once, where the server offers it (UploadCall.connections). */
export const PARALLEL_UPLOAD_MIN_BYTES = 64 * 1024 * 1024;

/** Connections of a parallel upload unless the caller says (UploadCall.connections). */
export const DEFAULT_UPLOAD_CONNECTIONS = 4;

/** What the server's tus endpoint says of itself (OPTIONS {base_url}/uploads). */
interface TusServerOptions {
  /** Tus-Extension. */
  extensions: string[];
  /** Filehaven-Max-Chunk-Size; null when it does not say. */
  maxChunkSize: number | null;
}

export interface TusTransportOptions {
  /**
   * The JSON file that keeps the URL of each unfinished upload of a file path, so a later
   * process resumes it (upload-url-storage.ts). Without it an upload resumes only within
   * its own run, after a lost connection.
   */
  resumeFile?: string;
  /** Delays before the retries (default TUS_RETRY_DELAYS). */
  retryDelays?: number[];
}

/**
 * Whether the server takes tus 1.0 uploads: `OPTIONS {base_url}/uploads` answers with
 * `Tus-Version` listing 1.0.0 (tus 1.0 "OPTIONS"). A server without them (an older
 * filehaven) answers 404 or 405.
 */
export async function serverOffersTus(connection: ApiConnection, options: CallOptions = {}): Promise<boolean> {
  const signal = connection.signalFor(options);
  const response = await connection.send(`${connection.server}${TUS_PATH}`, { method: 'OPTIONS', signal, redirect: 'error' });
  await response.arrayBuffer().catch(() => {});
  const versions = (response.headers.get('tus-version') ?? '').split(',').map((version) => version.trim());
  return response.ok && versions.includes('1.0.0');
}

/**
 * Uploads with the tus 1.0 protocol at `{base_url}/uploads` (tus-js-client): created
 * with `Upload-Length` and `Upload-Metadata` (filename, folder), then PATCHed from the
 * server's offset. A lost connection, an interruption or `kill -9` costs only the bytes
 * in flight: a retry, or the next run for the same file, asks the server's offset (HEAD)
 * and sends the rest. PATCHes are at most the size the server names in
 * Filehaven-Max-Chunk-Size (on the creation's answer, and on the HEAD of a resume), or
 * the caller's smaller `chunkSize`. The final PATCH asks for (Accept) and gets the same
 * `File upload result` as POST /files.
 */
export class TusUploadTransport implements UploadTransport {
  private readonly storage: JsonFileUrlStorage | null;
  private readonly retryDelays: number[];
  /** The server's OPTIONS, asked once, when the first large file comes; a failure to ask is not remembered. */
  private serverOptions: Promise<TusServerOptions> | undefined;

  constructor(
    private readonly connection: ApiConnection,
    options: TusTransportOptions = {},
  ) {
    this.storage = options.resumeFile === undefined ? null : new JsonFileUrlStorage(options.resumeFile);
    this.retryDelays = options.retryDelays ?? TUS_RETRY_DELAYS;
  }

  async send(source: UploadSource, call: UploadCall): Promise<StoredFile> {
    const metadata: Record<string, string> = {};
    if (call.folder !== undefined) metadata.folder = call.folder;
    if (call.expiresIn !== undefined) metadata.expires_in = String(call.expiresIn);
    const keyHash = createHash('sha256')
      .update(this.connection.key ?? '')
      .digest('hex')
      .slice(0, 32);
    const lastResponse = await this.run(source, call, { headers: this.connection.authHeaders(), metadata, scope: `key-sha256:${keyHash}`, parallel: true });
    return withExpiry(this.storedFileOf(lastResponse, source), lastResponse.getHeader(EXPIRES_HEADER));
  }

  /**
   * Into an upload request: `request` in the metadata, no key, the request's password on
   * every request (creation, HEAD, PATCH); the final PATCH answers `Upload request
   * upload`. A later run resumes it like any other upload of a file path.
   */
  async sendToRequest(source: UploadSource, call: UploadCall, request: RequestDestination): Promise<RequestUpload> {
    const lastResponse = await this.run(source, call, { headers: requestHeaders(request), metadata: { request: request.id }, scope: `request:${request.id}` });
    const body = lastResponse.getBody();
    const feed = readFeed(body);
    if (feed?.webUrl) this.connection.webUrl = feed.webUrl.replace(/\/+$/, '');
    if (feed?.title === 'Upload request upload' && feed.entries.length > 0) return requestUpload(firstEntry(feed));
    // Completed by an earlier run (the answer that said so was lost): the HEAD names the file, if anything.
    const id = lastResponse.getHeader('Filehaven-File-Id');
    if (body.trim() === '' && id) return { id, name: source.name, size: source.size ?? 0 };
    throw new FilehavenApiError(
      'errorUnexpectedResponse',
      lastResponse.getStatus(),
      `expected "Upload request upload" at the end of the tus upload, got ${feed ? `"${feed.title}"` : 'no Atom feed'}`,
    );
  }

  /**
   * One tus upload from creation (or the stored URL of an earlier run) to its last
   * answer. `headers` go on every request; `scope` (the account's key hash, or the
   * request) keeps entries of one apart from another's.
   */
  private async run(
    source: UploadSource,
    call: UploadCall,
    destination: { headers: Record<string, string>; metadata: Record<string, string>; scope: string; parallel?: boolean },
  ): Promise<HttpResponse> {
    const signal = this.connection.signalFor(call);
    signal?.throwIfAborted();
    const headers = { ...destination.headers, Accept: 'application/atom+xml' };
    const fingerprint = this.storage && source.localIdentity !== undefined ? this.fingerprint(destination.scope, source.localIdentity) : null;
    const previous = fingerprint && this.storage ? await this.storage.findUploadsByFingerprint(fingerprint) : [];
    const metadata: Record<string, string> = { filename: source.name, ...destination.metadata };
    let wanted = call.chunkSize ?? Number.POSITIVE_INFINITY;
    /** What the server last said in Filehaven-Max-Chunk-Size; null until it says. */
    let advertised: number | null = null;
    // An entry of a run keeps its own way (one upload, or its partials), whatever this run would pick.
    const latest = previous.at(-1);
    const connections = latest ? (latest.parallelUploadUrls?.length ?? 1) : await this.connectionsFor(source, call, destination.parallel === true);
    if (connections > 1) {
      // Each partial upload is its own tus-js-client upload with a copy of these options:
      // the chunk size must be right before they start, not fixed up by onAfterResponse.
      advertised = (await this.tusOptions(signal)).maxChunkSize;
      if (advertised !== null) wanted = Math.min(wanted, advertised);
    }

    const lastResponse = await new Promise<HttpResponse>((resolve, reject) => {
      const options: UploadOptions = {
        endpoint: `${this.connection.server}${TUS_PATH}`,
        headers,
        metadata,
        retryDelays: this.retryDelays,
        httpStack: new ConnectionHttpStack(this.connection, signal),
        chunkSize: wanted,
        // The creation's answer (or a resume's HEAD) comes before the first PATCH, and
        // tus-js-client reads chunkSize again for every PATCH.
        onAfterResponse: (_request, response) => {
          const said = maxChunkSizeOf(response);
          if (said === null) return;
          advertised = said;
          upload.options.chunkSize = Math.min(wanted, said);
        },
        fileReader: uploadSourceReader,
        fingerprint: async () => fingerprint as string,
        storeFingerprintForResuming: fingerprint !== null,
        // Removed below, awaited: tus-js-client would remove it without waiting, and a
        // process that exits at once could keep an entry of a finished upload.
        removeFingerprintOnSuccess: false,
        onProgress: (sent, total) => call.onProgress?.(sent, total),
        onSuccess: ({ lastResponse }) => {
          settle();
          resolve(lastResponse);
        },
        onError: (error) => {
          settle();
          // The other partials of a parallel upload would go on sending: stop them, and end
          // them (and their reservations) when the server refused, as nothing resumes then.
          if (connections > 1) void upload.abort(isRefusal(error)).catch(() => {});
          reject(translated(error, signal, advertised));
        },
      };
      if (connections > 1) options.parallelUploads = connections;
      if (this.storage) options.urlStorage = this.storage;
      const upload = new Upload(source as unknown as Blob, options);
      // No termination on abort: the server keeps the bytes, so the next run resumes.
      const onAbort = () => {
        void upload.abort(false);
        reject(signal!.reason);
      };
      const settle = () => signal?.removeEventListener('abort', onAbort);
      // Aborted while the entries were read: the event has been and gone.
      if (signal?.aborted) return void reject(signal.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      // The newest entry: two can exist only when two processes raced on one file.
      if (latest) upload.resumeFromPreviousUpload(latest);
      upload.start();
    });

    // The file is stored whatever happens to its entry: an entry left behind (a full
    // disk) costs only a HEAD when the same file is uploaded again.
    if (fingerprint && this.storage) await this.storage.removeUploadsByFingerprint(fingerprint).catch(() => {});
    return lastResponse;
  }

  /**
   * How many connections to send a file over: `call.connections` (default
   * DEFAULT_UPLOAD_CONNECTIONS) for a file of PARALLEL_UPLOAD_MIN_BYTES or more to the
   * account (`allowed`: not into an upload request) of a server whose Tus-Extension has
   * `concatenation`; else 1. An older server gets one upload, as before.
   */
  private async connectionsFor(source: UploadSource, call: UploadCall, allowed: boolean): Promise<number> {
    const connections = call.connections ?? DEFAULT_UPLOAD_CONNECTIONS;
    if (!allowed || connections <= 1 || (source.size ?? 0) < PARALLEL_UPLOAD_MIN_BYTES) return 1;
    const offered = (await this.tusOptions(this.connection.signalFor(call))).extensions.includes('concatenation');
    return offered ? connections : 1;
  }

  private tusOptions(signal: AbortSignal | undefined): Promise<TusServerOptions> {
    this.serverOptions ??= askTusOptions(this.connection, signal);
    const asked = this.serverOptions;
    asked.catch(() => {
      if (this.serverOptions === asked) this.serverOptions = undefined;
    });
    return asked;
  }

  /**
   * The local file (absolute path, size, modification time), the server and the account
   * (or the upload request), so an entry is resumed only for the same bytes, to the same
   * server, by the same account. The key is hashed: the file never holds it.
   */
  private fingerprint(scope: string, localIdentity: string): string {
    return `filehaven-tus/1 ${this.connection.server} ${scope} ${localIdentity}`;
  }

  /**
   * The stored file, from the last answer. The final PATCH carries the `File upload
   * result` feed (and Filehaven-File-Id, -Download-Link, -Delete-Link). An upload that an
   * earlier run had already completed (kill -9 after the last byte, before its answer
   * arrived) ends on HEAD, whose headers name the file but not its delete link: the
   * server shows that secret once, in the answer that completed the upload.
   */
  private storedFileOf(response: HttpResponse, source: UploadSource): StoredFile {
    const body = response.getBody();
    if (body.trim() !== '') {
      const feed = readFeed(body);
      if (feed?.webUrl) this.connection.webUrl = feed.webUrl.replace(/\/+$/, '');
      if (feed?.title === 'File upload result' && feed.entries.length > 0) return storedFile(firstEntry(feed));
      throw new FilehavenApiError(
        'errorUnexpectedResponse',
        response.getStatus(),
        `expected "File upload result" at the end of the tus upload, got ${feed ? `"${feed.title}"` : 'no Atom feed'}`,
      );
    }
    const id = response.getHeader('Filehaven-File-Id');
    const downloadLink = response.getHeader('Filehaven-Download-Link');
    if (!id || !downloadLink) {
      throw new FilehavenApiError(
        'errorUnexpectedResponse',
        response.getStatus(),
        'the finished tus upload names no file (Filehaven-File-Id, Filehaven-Download-Link)',
      );
    }
    const deleteLink = response.getHeader('Filehaven-Delete-Link');
    // The stored name is the download link's last segment (API.md 1): the server's, cleaned.
    const name = URL.canParse(downloadLink) ? targetOfUrl(new URL(downloadLink))?.name : undefined;
    return { id, name: name ?? source.name, size: source.size ?? 0, downloadLink, ...(deleteLink ? { deleteLink } : {}) };
  }
}

/** OPTIONS {base_url}/uploads: its extensions and the largest PATCH it wants. */
async function askTusOptions(connection: ApiConnection, signal: AbortSignal | undefined): Promise<TusServerOptions> {
  const response = await connection.send(`${connection.server}${TUS_PATH}`, { method: 'OPTIONS', signal, redirect: 'error' });
  await response.arrayBuffer().catch(() => {});
  const extensions = (response.headers.get('tus-extension') ?? '').split(',').map((extension) => extension.trim());
  return { extensions: response.ok ? extensions : [], maxChunkSize: maxChunkSizeOf({ getHeader: (name: string) => response.headers.get(name) ?? undefined }) };
}

/** Whether tus-js-client failed on the server's refusal (a 4xx it does not retry), not on a lost connection. */
function isRefusal(error: Error): boolean {
  const status = error instanceof DetailedError ? error.originalResponse?.getStatus() : undefined;
  return status !== undefined && status >= 400 && status < 500 && status !== 409 && status !== 423;
}

/** Filehaven-Max-Chunk-Size of an answer, when it holds a whole number of bytes above 0. */
function maxChunkSizeOf(response: Pick<HttpResponse, 'getHeader'>): number | null {
  const value = response.getHeader(MAX_CHUNK_SIZE_HEADER)?.trim();
  if (value === undefined || !/^\d{1,16}$/.test(value)) return null;
  const bytes = Number(value);
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : null;
}

/**
 * A tus-js-client failure as the SDK's errors: the server's answer through the same
 * refusalOf as every call (its Atom error: SPEC code, status, Retry-After; or a proxy's
 * page, said in words); a connection failure as the FilehavenConnectionError
 * ApiConnection.send threw; anything else (a local file that cannot be read) as it is.
 * `advertised`: the largest PATCH the server asked for, for the words on a proxy's 413.
 */
function translated(error: Error, signal: AbortSignal | undefined, advertised: number | null): unknown {
  if (signal?.aborted) return signal.reason;
  if (!(error instanceof DetailedError)) return error;
  const answer = error.originalResponse;
  if (answer) {
    const status = answer.getStatus();
    if (status >= 200 && status < 300) return new FilehavenApiError('errorUnexpectedResponse', status, error.message);
    const response = answer.getUnderlyingObject() as Response | undefined;
    const retryAfter = answer.getHeader('Retry-After');
    const body = answer.getBody();
    const length = error.originalRequest?.getHeader('Content-Length');
    const refusal = refusalOf(response ?? { status, headers: new Headers(retryAfter ? { 'retry-after': retryAfter } : {}) }, readFeed(body), body, {
      url: error.originalRequest?.getURL() ?? '',
      bytes: length === undefined ? undefined : Number(length),
    });
    if (refusal.status === 413 && refusal.code === 'errorUnexpectedResponse') {
      // Not the site's own limit: say what would get the file through.
      const hint =
        advertised === null
          ? "the server does not say how large a PATCH may be (Filehaven-Max-Chunk-Size): send smaller ones (the SDK's chunkSize, the CLI's --chunk-size)"
          : `the site asks for PATCHes of up to ${advertised} bytes (its --upload-chunk-size), more than the proxy takes: its operator should lower that; meanwhile send smaller ones (the SDK's chunkSize, the CLI's --chunk-size)`;
      return new FilehavenApiError(refusal.code, refusal.status, `${refusal.message}; ${hint}`, refusal.retryAfter);
    }
    return refusal;
  }
  return error.causingError ?? error;
}
