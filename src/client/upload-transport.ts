import type { ApiConnection, CallOptions } from './api-connection.js';
import type { RequestUpload, StoredFile } from './api-types.js';
import type { AtomFeed } from './atom-reader.js';
import { FilehavenApiError, FilehavenConnectionError, UploadNotMovedError } from './client-errors.js';
import { firstEntry, requestUpload, storedFile } from './entry-mappers.js';
import { multipartBody } from './multipart-body.js';
import type { UploadSource } from './upload-source.js';

/** Progress of an upload: bytes of the file read into the request so far, and the size when known. */
export type UploadProgress = (sent: number, total: number | undefined) => void;

/** What a transport needs besides the bytes. */
export interface UploadCall extends CallOptions {
  /** Called as bytes are sent: the whole file's bytes so far (a resumed upload starts at the server's offset). */
  onProgress?: UploadProgress;
  /** A folder of the account (already checked) the file must end up in. */
  folder?: string;
  /**
   * The largest PATCH of a tus upload, in bytes; the server's `Filehaven-Max-Chunk-Size`
   * caps it (default: that, or the whole file from a server that does not say). POST
   * /files sends the file in one request whatever it says.
   */
  chunkSize?: number;
  /** Seconds until the file expires (`expires_in`, issue 25); absent: the site's default. */
  expiresIn?: number;
  /**
   * Connections a tus upload of PARALLEL_UPLOAD_MIN_BYTES or more is sent over at once
   * (tus concatenation: that many partial uploads, then one final), when the server
   * offers `concatenation`; 1 sends one upload. Default DEFAULT_UPLOAD_CONNECTIONS.
   */
  connections?: number;
}

/** The header in which a link's password travels (issue 25): never in the URL. */
export const SHARE_PASSWORD_HEADER = 'Filehaven-Share-Password';

/** The header in which an upload's answer says when the file expires (issue 25). */
export const EXPIRES_HEADER = 'Filehaven-Expires';

/** An upload request that an upload goes into, instead of the caller's account (issue 25). */
export interface RequestDestination {
  /** The request id. */
  id: string;
  /** The request's page, `{web_url}/r/<id>`, which a multipart upload is POSTed to. */
  url: string;
  /** Its password, when it has one: sent in Filehaven-Share-Password. */
  password?: string;
}

/** Headers of an upload into a request: no API key (the uploader needs no account), its password if any. */
export function requestHeaders(request: RequestDestination): Record<string, string> {
  return request.password === undefined ? {} : { [SHARE_PASSWORD_HEADER]: request.password };
}

/** `expires` of a stored file, from the answer's Filehaven-Expires header. */
export function withExpiry(file: StoredFile, header: string | null | undefined): StoredFile {
  const expires = header?.trim();
  return expires ? { ...file, expires } : file;
}

/**
 * One way of getting a file to the server: SPEC.md's multipart POST /files
 * (MultipartUploadTransport) or tus 1.0 at /uploads (TusUploadTransport, resumable).
 * FilehavenClient.upload() picks one, so callers do not change.
 */
export interface UploadTransport {
  /**
   * Sends one file and, with `call.folder`, stores it in that folder; resolves to the
   * stored file, or throws the server's error (UploadNotMovedError when the file was
   * stored but could not be put in the folder).
   */
  send(source: UploadSource, call: UploadCall): Promise<StoredFile>;
  /**
   * Sends one file into someone's upload request (no API key; the request's password, if
   * any); resolves to the file's id, name and size, or throws the server's error.
   */
  sendToRequest(source: UploadSource, call: UploadCall, request: RequestDestination): Promise<RequestUpload>;
}

/** Moves files into a folder: FilehavenClient.move. */
export type MoveFiles = (ids: string[], folder: string, options: CallOptions) => Promise<unknown>;

/**
 * POST /files with one `upload` part, streamed: the body is read from the source as
 * the socket takes it, with Content-Length when the size is known. An abort cuts the
 * request; the server then keeps nothing of it (docs/architecture.md "Uploads stream"). POST /files
 * takes no folder (SPEC.md), so a file for a folder is moved there once stored.
 */
export class MultipartUploadTransport implements UploadTransport {
  constructor(
    private readonly connection: ApiConnection,
    private readonly move: MoveFiles,
  ) {}

  async send(source: UploadSource, call: UploadCall): Promise<StoredFile> {
    let expires: string | null = null;
    const fields: Record<string, string> = call.expiresIn === undefined ? {} : { expires_in: String(call.expiresIn) };
    let feed: AtomFeed;
    try {
      feed = await this.post(source, call, {
        path: '/files',
        fields,
        expect: 'File upload result',
        onHeaders: (headers) => {
          expires = headers.get(EXPIRES_HEADER);
        },
      });
    } catch (error) {
      if (error instanceof FilehavenConnectionError) throw await this.explainCut(error, call);
      throw error;
    }
    const file = withExpiry(storedFile(firstEntry(feed)), expires);
    if (call.folder === undefined) return file;
    try {
      await this.move([file.id], call.folder, { signal: call.signal });
    } catch (error) {
      if (error instanceof FilehavenApiError) throw new UploadNotMovedError(error, file);
      throw error;
    }
    return file;
  }

  /**
   * `POST {web_url}/r/<id>` with the same one `upload` part, no key, the request's
   * password in its header; the answer names the file's id, name and size only.
   */
  async sendToRequest(source: UploadSource, call: UploadCall, request: RequestDestination): Promise<RequestUpload> {
    try {
      const feed = await this.post(source, call, {
        path: `/r/${request.id}`,
        url: request.url,
        headers: requestHeaders(request),
        auth: false,
        expect: 'Upload request upload',
      });
      return requestUpload(firstEntry(feed));
    } catch (error) {
      if (!(error instanceof FilehavenConnectionError)) throw error;
      // No key to probe with: say what the refusal may have been.
      throw new FilehavenConnectionError(
        `${error.message} while the file was being sent: the server may have refused it (over the request's limits or the password) and closed the connection`,
        { cause: error },
      );
    }
  }

  /** The multipart request, streamed, with the size declared when known. */
  private async post(
    source: UploadSource,
    call: UploadCall,
    request: {
      path: string;
      url?: string;
      headers?: Record<string, string>;
      auth?: boolean;
      fields?: Record<string, string>;
      expect: string;
      onHeaders?: (headers: Headers) => void;
    },
  ): Promise<AtomFeed> {
    let sent = 0;
    call.onProgress?.(0, source.size);
    const body = multipartBody(
      source,
      (bytes) => {
        sent += bytes;
        call.onProgress?.(sent, source.size);
      },
      request.fields,
    );
    const headers: Record<string, string> = { 'Content-Type': body.contentType };
    if (body.length !== undefined) headers['Content-Length'] = String(body.length);
    return this.connection.call({
      method: 'POST',
      path: request.path,
      url: request.url,
      headers: request.headers,
      auth: request.auth,
      body: { data: body.chunks, headers },
      expect: request.expect,
      signal: call.signal,
      onHeaders: request.onHeaders,
    });
  }

  /**
   * A server refuses an upload it will not take (a wrong key, a declared size over the
   * limit, no upload volume left) before reading the body. filehaven then reads and drops
   * the rest for up to 30 s so the refusal arrives (src/http/lingering-close.ts), but a
   * proxy, an older server or a longer upload can still cut the connection first, and the
   * refusal is lost with it. A refused key can be told with one more call; the other
   * refusals cannot, so the error says what they may be.
   */
  private async explainCut(error: FilehavenConnectionError, call: UploadCall): Promise<Error> {
    const keyRefused = await this.connection.call({ method: 'GET', path: '/account', expect: 'Account Info', signal: call.signal }).then(
      () => null,
      (probe: unknown) => probe,
    );
    if (keyRefused) return keyRefused as Error;
    return new FilehavenConnectionError(
      `${error.message} while the file was being sent: the server may have refused it (over the size limit or the upload volume) and closed the connection`,
      { cause: error },
    );
  }
}
