import { ApiConnection, type CallOptions, type FetchFunction } from './api-connection.js';
import type {
  AccountInfo,
  DeletedItem,
  DirectLink,
  FileDetails,
  FileExpiry,
  FileStatus,
  FileSummary,
  FolderListing,
  FolderSummary,
  MoveResult,
  Page,
  RequestUpload,
  Share,
  StoredFile,
  UploadRequest,
} from './api-types.js';
import { childText } from './atom-reader.js';
import { FilehavenApiError } from './client-errors.js';
import {
  type DownloadOptions,
  type DownloadStream,
  type DownloadTarget,
  type LinkParts,
  openDownload,
  requestOfUrl,
  shareOfUrl,
  shareStatusErrors,
  targetOfUrl,
} from './download.js';
import * as entries from './entry-mappers.js';
import {
  expiryForm,
  requestChangeForm,
  requestForm,
  type ShareChanges,
  type ShareOptions,
  shareChangeForm,
  shareForm,
  type UploadRequestChanges,
  type UploadRequestOptions,
} from './sharing-forms.js';
import { serverOffersTus, TusUploadTransport } from './tus-upload-transport.js';
import { type UploadInput, type UploadSource, uploadSource } from './upload-source.js';
import { EXPIRES_HEADER, MultipartUploadTransport, SHARE_PASSWORD_HEADER, type UploadProgress, type UploadTransport, withExpiry } from './upload-transport.js';

export interface ClientOptions {
  /** The server's {base_url}, e.g. `https://files.example.com`. */
  server: string;
  /** The API key (SPEC.md "Authentication"); createApiKey() gets one from login and password. */
  key?: string;
  /** A fetch to use instead of the global one. */
  fetch?: FetchFunction;
  /** Aborts every call of this client (each call also takes its own). */
  signal?: AbortSignal;
  /**
   * A JSON file where tus uploads of file paths keep their upload URLs (mode 0600,
   * written atomically), so an upload cut by Ctrl-C, a lost connection or `kill -9`
   * resumes when the same file is uploaded again, by any later process. The CLI's is
   * `uploads.json` beside its login. Without it, a tus upload resumes only within its
   * own run (its retries after a lost connection).
   */
  resumeFile?: string;
}

/**
 * How `upload()` sends a file: `tus` (resumable, `{base_url}/uploads`), `post` (SPEC.md's
 * POST /files), or `auto`: tus when the server offers it and the input is a file or a
 * Blob, POST otherwise (a stream is read once, so it cannot be resumed).
 */
export type UploadTransportChoice = 'auto' | 'tus' | 'post';

export interface UploadOptions extends CallOptions {
  /** File name on the server; default the path's base name (required for a Blob or a stream). */
  name?: string;
  /** Size of a stream, so the request declares its length; files and Blobs know theirs. */
  size?: number;
  /** Move the file into this folder of yours once stored. */
  folder?: string;
  /** Called as bytes are sent. */
  onProgress?: UploadProgress;
  /** Which protocol sends the file (default `auto`). */
  transport?: UploadTransportChoice;
  /**
   * The largest request of a tus upload, in bytes (default: what the server says in
   * `Filehaven-Max-Chunk-Size`, which also caps this; the whole file from a server that
   * says nothing). For a proxy whose body limit is lower than the server knows.
   */
  chunkSize?: number;
  /**
   * Seconds until the file expires and behaves as deleted (`expires_in`, issue 25);
   * absent: the site's default (none unless its operator set one). The stored file's
   * `expires` says when.
   */
  expiresIn?: number;
  /**
   * Connections a tus upload of a large file (64 MiB or more, PARALLEL_UPLOAD_MIN_BYTES)
   * is sent over at once, as partial uploads the server joins (tus concatenation), when
   * the server offers it (default 4; 1 sends one upload; at most MAX_UPLOAD_CONNECTIONS).
   * A server without `concatenation` gets one upload whatever this says.
   */
  connections?: number;
}

/** The most connections one upload may use (UploadOptions.connections). */
export const MAX_UPLOAD_CONNECTIONS = 16;

/** How `uploadToRequest()` sends a file: the upload options that apply to someone else's request. */
export interface RequestUploadOptions extends Omit<UploadOptions, 'folder' | 'expiresIn' | 'connections'> {
  /** The request's password, when it has one (sent in Filehaven-Share-Password, never in a URL). */
  password?: string;
}

/** A download of a share: the download options, the share's password, and a file of a folder share. */
export interface ShareDownloadOptions extends DownloadOptions {
  /** The share's password, when it has one (sent in Filehaven-Share-Password, never in a URL). */
  password?: string;
  /**
   * One file of a folder share: its reference on that share, the last part of its
   * `/s/<id>/download/<ref>` link on the share's page (never the file's id, which the share
   * does not accept); absent: the shared file, or the whole folder as one ZIP.
   */
  file?: string;
}

/** Whether a share or request is given as its link (rather than its id). */
const isUrl = (value: string) => /^https?:\/\//i.test(value);

/** How a download by id fetches its bytes. */
export type DownloadVia = 'auto' | 'direct' | 'public';

const FILE_REF = /^[A-Za-z0-9_-]+$/;

/** An id as one path segment; anything else is refused before it reaches a URL. */
function ref(id: string, what = 'file id'): string {
  if (!FILE_REF.test(id)) throw new TypeError(`not a ${what}: "${id}"`);
  return id;
}

function checkChunkSize(chunkSize: number | undefined): void {
  if (chunkSize !== undefined && !(Number.isSafeInteger(chunkSize) && chunkSize > 0))
    throw new TypeError(`upload(): chunkSize must be a whole number of bytes above 0, got ${chunkSize}`);
}

function checkConnections(connections: number | undefined): void {
  if (connections !== undefined && !(Number.isSafeInteger(connections) && connections >= 1 && connections <= MAX_UPLOAD_CONNECTIONS))
    throw new TypeError(`upload(): connections must be a whole number from 1 to ${MAX_UPLOAD_CONNECTIONS}, got ${connections}`);
}

/**
 * The filehaven API for programs: one method per endpoint of SPEC.md and of the
 * extensions (api-catalogue.ts), Atom answers as typed objects, every failure a
 * FilehavenApiError with the SPEC code, uploads and downloads streamed, every call
 * abortable.
 */
export class FilehavenClient {
  private readonly connection: ApiConnection;
  private readonly multipart: UploadTransport;
  private readonly tus: UploadTransport;
  /** Whether the server offers tus, once asked (one OPTIONS per client). */
  private tusOffered: Promise<boolean> | undefined;

  constructor(options: ClientOptions) {
    const server = options.server.trim().replace(/\/+$/, '');
    let parsed: URL;
    try {
      parsed = new URL(server);
    } catch {
      throw new TypeError(`not a server URL: "${options.server}"`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TypeError(`not an http(s) URL: "${options.server}"`);
    this.connection = new ApiConnection(server, options.key, options.fetch ?? ((input, init) => fetch(input, init)), options.signal);
    this.multipart = new MultipartUploadTransport(this.connection, (ids, folder, call) => this.move(ids, folder, call));
    this.tus = new TusUploadTransport(this.connection, { resumeFile: options.resumeFile });
  }

  /** {base_url}, without a trailing slash. */
  get server(): string {
    return this.connection.server;
  }

  /** {web_url} as the server announced it in its last answer; empty before the first. */
  get webUrl(): string {
    return this.connection.webUrl;
  }

  /** POST /apikeys: the account's API key from its login and password (errorWrongCredentials). */
  async createApiKey(login: string, password: string, options: CallOptions = {}): Promise<string> {
    const feed = await this.connection.call({
      method: 'POST',
      path: '/apikeys',
      form: new URLSearchParams({ login, password }),
      expect: 'ApiKey',
      auth: false,
      ...options,
    });
    const key = childText(entries.firstEntry(feed), 'content')?.trim();
    if (!key) throw new FilehavenApiError('errorUnexpectedResponse', 201, 'the answer holds no API key');
    return key;
  }

  /** GET /account: account and premium details. */
  async account(options: CallOptions = {}): Promise<AccountInfo> {
    const feed = await this.connection.call({ method: 'GET', path: '/account', expect: 'Account Info', ...options });
    return entries.accountInfo(entries.firstEntry(feed));
  }

  /** GET /files (extension): one page of your files, newest first. */
  async listFiles(
    options: CallOptions & { status?: FileStatus[]; folder?: string | 'root'; limit?: number; cursor?: string } = {},
  ): Promise<Page<FileSummary>> {
    const feed = await this.connection.call({
      method: 'GET',
      path: '/files',
      query: {
        status: options.status?.join(','),
        folder: options.folder,
        limit: options.limit === undefined ? undefined : String(options.limit),
        cursor: options.cursor,
      },
      expect: 'File list',
      signal: options.signal,
      listing: true,
    });
    return { items: feed.entries.map(entries.fileSummary), nextCursor: entries.nextCursor(feed) };
  }

  /** Every file of the listing, page after page. */
  async *allFiles(options: CallOptions & { status?: FileStatus[]; folder?: string | 'root' } = {}): AsyncIterable<FileSummary> {
    let cursor: string | undefined;
    do {
      const page = await this.listFiles({ ...options, limit: 500, cursor });
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /** GET /files/<id> (premium): file details. */
  async fileDetails(id: string, options: CallOptions = {}): Promise<FileDetails> {
    let expires: string | null = null;
    const feed = await this.connection.call({
      method: 'GET',
      path: `/files/${ref(id)}`,
      expect: 'File Full info',
      onHeaders: (headers) => {
        expires = headers.get(EXPIRES_HEADER);
      },
      ...options,
    });
    const details = entries.fileDetails(entries.firstEntry(feed));
    const when = (expires as string | null)?.trim();
    return when ? { ...details, expires: when } : details;
  }

  /** GET /files/<id>;DirectLink (premium): a signed, expiring direct link. */
  async directLink(id: string, options: CallOptions = {}): Promise<DirectLink> {
    const feed = await this.connection.call({ method: 'GET', path: `/files/${ref(id)};DirectLink`, expect: 'File info', ...options });
    return entries.directLink(entries.firstEntry(feed));
  }

  /**
   * Uploads a file path, Blob or stream, streamed, with tus (resumable) when the server
   * offers it, else with POST /files (`transport` forces either). With `folder`, the
   * folder is checked first and the file stored there (tus: by the server; POST: moved
   * after, and a move that fails throws UploadNotMovedError, which carries the file).
   */
  async upload(input: UploadInput, options: UploadOptions = {}): Promise<StoredFile> {
    checkChunkSize(options.chunkSize);
    checkConnections(options.connections);
    if (options.expiresIn !== undefined && !Number.isFinite(options.expiresIn)) throw new TypeError(`upload(): expiresIn must be a number of seconds`);
    const source = await uploadSource(input, options);
    if (options.folder !== undefined) await this.folder(options.folder, { limit: 1, signal: options.signal });
    const transport = await this.transportFor(source, options.transport ?? 'auto', options.signal);
    return transport.send(source, {
      signal: options.signal,
      onProgress: options.onProgress,
      folder: options.folder,
      chunkSize: options.chunkSize,
      expiresIn: options.expiresIn,
      connections: options.connections,
    });
  }

  /**
   * The transport for one upload: tus needs a source of known size that can be read
   * again. `auto` also leaves an empty file to POST /files: nothing to resume, and one
   * request for the server's errorEmptyFile.
   */
  private async transportFor(source: UploadSource, choice: UploadTransportChoice, signal: AbortSignal | undefined): Promise<UploadTransport> {
    const resumable = source.size !== undefined && source.readRange !== undefined;
    if (choice === 'post') return this.multipart;
    if (choice === 'tus') {
      if (!resumable) throw new TypeError('upload(): tus needs a file path or a Blob (a stream is read only once)');
      return this.tus;
    }
    if (!resumable || source.size === 0) return this.multipart;
    return (await this.offersTus(signal)) ? this.tus : this.multipart;
  }

  /**
   * Whether the server takes tus uploads (`OPTIONS /uploads` with Tus-Version 1.0.0),
   * asked once per client; a failure to ask is not remembered.
   */
  offersTus(signal?: AbortSignal): Promise<boolean> {
    this.tusOffered ??= serverOffersTus(this.connection, { signal });
    const asked = this.tusOffered;
    asked.catch(() => {
      if (this.tusOffered === asked) this.tusOffered = undefined;
    });
    return asked;
  }

  /** POST /files/copy/<id>: a copy of any active file in your account. */
  async copy(id: string, options: CallOptions = {}): Promise<StoredFile> {
    let expires: string | null = null;
    const feed = await this.connection.call({
      method: 'POST',
      path: `/files/copy/${ref(id)}`,
      expect: 'File copy',
      onHeaders: (headers) => {
        expires = headers.get(EXPIRES_HEADER);
      },
      ...options,
    });
    // A copy expires when the site's default expiry gives it one.
    return withExpiry(entries.storedFile(entries.firstEntry(feed)), expires);
  }

  /** DELETE /files/<id> (extension): deletes one of your files. */
  async deleteFile(id: string, options: CallOptions = {}): Promise<DeletedItem> {
    const feed = await this.connection.call({ method: 'DELETE', path: `/files/${ref(id)}`, expect: 'File delete', ...options });
    const entry = entries.firstEntry(feed);
    return { id: childText(entry, 'id') ?? id, name: childText(entry, 'title') ?? '' };
  }

  /** PUT /folders/<id>;files: moves your files into one of your folders, all or nothing. */
  async move(ids: string[], folder: string, options: CallOptions = {}): Promise<MoveResult> {
    if (ids.length === 0) throw new TypeError('move(): no file ids');
    const form = new URLSearchParams();
    for (const [index, id] of ids.entries()) form.set(`files[${index}]`, ref(id));
    const feed = await this.connection.call({
      method: 'PUT',
      path: `/folders/${ref(folder, 'folder id')};files`,
      form,
      expect: 'Add files to folder',
      ...options,
    });
    return entries.moveResult(entries.firstEntry(feed));
  }

  /** POST /folders (extension): creates a folder, at the top or in `parent`. */
  async createFolder(name: string, parent?: string, options: CallOptions = {}): Promise<FolderSummary> {
    const form = new URLSearchParams({ name });
    if (parent !== undefined) form.set('parent', ref(parent, 'folder id'));
    const feed = await this.connection.call({ method: 'POST', path: '/folders', form, expect: 'Folder', ...options });
    return entries.folderSummary(entries.firstEntry(feed));
  }

  /** GET /folders (extension): one page of your folders under `parent` (default: all). */
  async listFolders(options: CallOptions & { parent?: string | 'root'; limit?: number; cursor?: string } = {}): Promise<Page<FolderSummary>> {
    const feed = await this.connection.call({
      method: 'GET',
      path: '/folders',
      query: { parent: options.parent, limit: options.limit === undefined ? undefined : String(options.limit), cursor: options.cursor },
      expect: 'Folder list',
      signal: options.signal,
      listing: true,
    });
    return { items: feed.entries.map(entries.folderSummary), nextCursor: entries.nextCursor(feed) };
  }

  /** GET /folders/<id> (extension): a folder with one page of its files (sub-folders on the first page). */
  async folder(id: string, options: CallOptions & { limit?: number; cursor?: string } = {}): Promise<FolderListing> {
    const feed = await this.connection.call({
      method: 'GET',
      path: `/folders/${ref(id, 'folder id')}`,
      query: { limit: options.limit === undefined ? undefined : String(options.limit), cursor: options.cursor },
      expect: 'Folder',
      signal: options.signal,
    });
    return entries.folderListing(feed);
  }

  /** DELETE /folders/<id> (extension): removes an empty folder of yours (errorFolderNotEmpty otherwise). */
  async deleteFolder(id: string, options: CallOptions = {}): Promise<DeletedItem> {
    const feed = await this.connection.call({ method: 'DELETE', path: `/folders/${ref(id, 'folder id')}`, expect: 'Folder delete', ...options });
    const entry = entries.firstEntry(feed);
    return { id: childText(entry, 'id') ?? id, name: childText(entry, 'title') ?? '' };
  }

  /**
   * Where a download's bytes come from, before any is fetched. A URL is a download link
   * (its raw bytes, `?download=1`) or a direct link. An id is fetched through a direct
   * link when the account has active premium (`via: 'auto'`, uncapped, counted against
   * its traffic), else through the public raw download (anyone may download an active
   * file, at the free speed). Public targets are asked with HEAD for name and size.
   */
  async resolveDownload(idOrUrl: string, options: CallOptions & { via?: DownloadVia } = {}): Promise<DownloadTarget> {
    let target: DownloadTarget;
    // Only the signal goes on to the calls made here: the download's own options (its
    // method, its range) are not theirs.
    const call = { signal: options.signal };
    if (/^https?:\/\//i.test(idOrUrl)) {
      const found = targetOfUrl(new URL(idOrUrl));
      if (!found) throw new TypeError(`not a filehaven download link: ${idOrUrl}`);
      target = found;
    } else {
      const via = options.via ?? 'auto';
      const premium = via === 'direct' || (via === 'auto' && (await this.account(call)).premium === 'Active');
      if (premium) {
        const link = await this.directLink(idOrUrl, call);
        return { url: link.url, id: link.id, name: link.name, size: link.size, direct: true };
      }
      if (!this.webUrl) await this.account(call);
      // The server finds the file by id; the name segment of a download link is for people.
      target = { url: `${this.webUrl}/${ref(idOrUrl)}/${idOrUrl}?download=1`, id: idOrUrl, name: idOrUrl, size: undefined, direct: false };
    }
    if (target.direct) return target;
    const head = await this.download(target, { signal: options.signal, method: 'HEAD' });
    return { ...target, name: head.name, size: head.size };
  }

  /**
   * Downloads a file (id, download link, direct link, or a resolved target) as a
   * stream. `offset` resumes with Range; `ifRange` (the ETag of the bytes held) makes a
   * changed file come back whole: check the answer's `offset`.
   */
  async download(target: string | DownloadTarget, options: DownloadOptions & { via?: DownloadVia } = {}): Promise<DownloadStream> {
    const resolved = typeof target === 'string' ? await this.resolveDownload(target, options) : target;
    // The key goes to the server's own origins only, never to a host a pasted link names.
    if (resolved.direct && !this.webUrl) await this.account(options);
    const origin = new URL(resolved.url).origin;
    const keyAllowed = origin === new URL(this.server).origin || (this.webUrl !== '' && origin === new URL(this.webUrl).origin);
    if (resolved.direct && !keyAllowed) throw new TypeError(`the direct link is not on ${this.server}: its API key is not sent there`);
    return openDownload(this.connection, resolved, options, keyAllowed);
  }

  /** PUT /files/<id>;expiry (issue 25): the file expires `expiresIn` seconds from now; null: never. */
  async setFileExpiry(id: string, expiresIn: number | null, options: CallOptions = {}): Promise<FileExpiry> {
    const feed = await this.connection.call({
      method: 'PUT',
      path: `/files/${ref(id)};expiry`,
      form: expiryForm(expiresIn),
      expect: 'File expiry',
      ...options,
    });
    return entries.fileExpiry(entries.firstEntry(feed));
  }

  /** POST /shares (issue 25): shares one of your active files or folders; `share.link` is what you hand out. */
  async createShare(target: { file: string } | { folder: string }, options: ShareOptions = {}): Promise<Share> {
    const feed = await this.connection.call({
      method: 'POST',
      path: '/shares',
      form: shareForm(target, options, ref),
      expect: 'Share',
      signal: options.signal,
    });
    return entries.share(entries.firstEntry(feed));
  }

  /** GET /shares: one page of your shares, newest first. */
  async listShares(options: CallOptions & { limit?: number; cursor?: string } = {}): Promise<Page<Share>> {
    const feed = await this.connection.call({
      method: 'GET',
      path: '/shares',
      query: { limit: options.limit === undefined ? undefined : String(options.limit), cursor: options.cursor },
      expect: 'Share list',
      signal: options.signal,
      listing: true,
    });
    return { items: feed.entries.map(entries.share), nextCursor: entries.nextCursor(feed) };
  }

  /** Every share of yours, page after page. */
  async *allShares(options: CallOptions = {}): AsyncIterable<Share> {
    let cursor: string | undefined;
    do {
      const page = await this.listShares({ ...options, limit: 500, cursor });
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /** GET /shares/<id>: one of your shares with its count (another account's is errorShareNotFound). */
  async share(id: string, options: CallOptions = {}): Promise<Share> {
    const feed = await this.connection.call({ method: 'GET', path: `/shares/${ref(id, 'share id')}`, expect: 'Share', ...options });
    return entries.share(entries.firstEntry(feed));
  }

  /** PUT /shares/<id>: changes expiry, password, download limit or fast; the count so far stays. */
  async changeShare(id: string, changes: ShareChanges): Promise<Share> {
    const feed = await this.connection.call({
      method: 'PUT',
      path: `/shares/${ref(id, 'share id')}`,
      form: shareChangeForm(changes),
      expect: 'Share',
      signal: changes.signal,
    });
    return entries.share(entries.firstEntry(feed));
  }

  /** DELETE /shares/<id>: revokes a share; its link answers errorShareNotFound from then on. */
  async revokeShare(id: string, options: CallOptions = {}): Promise<DeletedItem> {
    const feed = await this.connection.call({ method: 'DELETE', path: `/shares/${ref(id, 'share id')}`, expect: 'Share', ...options });
    const entry = entries.firstEntry(feed);
    return { id: childText(entry, 'id') ?? id, name: childText(entry, 'title') ?? '' };
  }

  /**
   * Downloads a share (no account needed): its id or its link (`{web_url}/s/<id>`, or a
   * `/download/<file ref>` link of one file from the share's page). The shared file's bytes, a folder share as
   * one ZIP, or with `file` one file of it; the password in Filehaven-Share-Password,
   * never the API key (a share is the owner's to pay for, not the downloader's). A
   * response from byte 0 counts as one download; `offset` and `ifRange` resume.
   */
  async downloadShare(share: string, options: ShareDownloadOptions = {}): Promise<DownloadStream> {
    const parts = await this.linkParts(share, 'share', options.signal);
    const file = options.file ?? parts.fileId;
    const url = `${parts.webUrl}/s/${ref(parts.id, 'share id')}/download${file === undefined ? '' : `/${ref(file)}`}`;
    const headers: Record<string, string> = options.password === undefined ? {} : { [SHARE_PASSWORD_HEADER]: options.password };
    const target: DownloadTarget = { url, id: file ?? parts.id, name: file ?? parts.id, size: undefined, direct: false };
    return openDownload(this.connection, target, options, false, headers, shareStatusErrors);
  }

  /** POST /requests (issue 25): a link where others upload into one of your folders; `request.link` is what you hand out. */
  async createUploadRequest(options: UploadRequestOptions = {}): Promise<UploadRequest> {
    const feed = await this.connection.call({
      method: 'POST',
      path: '/requests',
      form: requestForm(options, ref),
      expect: 'Upload request',
      signal: options.signal,
    });
    return entries.uploadRequest(entries.firstEntry(feed));
  }

  /** GET /requests: one page of your upload requests, newest first. */
  async listUploadRequests(options: CallOptions & { limit?: number; cursor?: string } = {}): Promise<Page<UploadRequest>> {
    const feed = await this.connection.call({
      method: 'GET',
      path: '/requests',
      query: { limit: options.limit === undefined ? undefined : String(options.limit), cursor: options.cursor },
      expect: 'Upload request list',
      signal: options.signal,
      listing: true,
    });
    return { items: feed.entries.map(entries.uploadRequest), nextCursor: entries.nextCursor(feed) };
  }

  /** Every upload request of yours, page after page. */
  async *allUploadRequests(options: CallOptions = {}): AsyncIterable<UploadRequest> {
    let cursor: string | undefined;
    do {
      const page = await this.listUploadRequests({ ...options, limit: 500, cursor });
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /** GET /requests/<id>: one of your upload requests with its counts. */
  async uploadRequest(id: string, options: CallOptions = {}): Promise<UploadRequest> {
    const feed = await this.connection.call({ method: 'GET', path: `/requests/${ref(id, 'request id')}`, expect: 'Upload request', ...options });
    return entries.uploadRequest(entries.firstEntry(feed));
  }

  /** PUT /requests/<id>: changes title, message, expiry, password or limits; the counts so far stay. */
  async changeUploadRequest(id: string, changes: UploadRequestChanges): Promise<UploadRequest> {
    const feed = await this.connection.call({
      method: 'PUT',
      path: `/requests/${ref(id, 'request id')}`,
      form: requestChangeForm(changes),
      expect: 'Upload request',
      signal: changes.signal,
    });
    return entries.uploadRequest(entries.firstEntry(feed));
  }

  /** DELETE /requests/<id>: closes an upload request; the files it received stay. */
  async closeUploadRequest(id: string, options: CallOptions = {}): Promise<DeletedItem> {
    const feed = await this.connection.call({ method: 'DELETE', path: `/requests/${ref(id, 'request id')}`, expect: 'Upload request', ...options });
    const entry = entries.firstEntry(feed);
    return { id: childText(entry, 'id') ?? id, name: childText(entry, 'title') ?? '' };
  }

  /**
   * Uploads into someone's upload request (no account needed): its id or its link
   * (`{web_url}/r/<id>`). Streamed like upload(): tus through `{base_url}/uploads`
   * with `request` in the metadata (resumable) when the server offers it and the input
   * is a file or a Blob, else `POST {web_url}/r/<id>`. The password goes in
   * Filehaven-Share-Password, the API key never. The answer names the file's id, name and
   * size only.
   */
  async uploadToRequest(request: string, input: UploadInput, options: RequestUploadOptions = {}): Promise<RequestUpload> {
    checkChunkSize(options.chunkSize);
    const parts = await this.linkParts(request, 'request', options.signal);
    const source = await uploadSource(input, options);
    const transport = await this.transportFor(source, options.transport ?? 'auto', options.signal);
    const destination = {
      id: ref(parts.id, 'request id'),
      url: `${parts.webUrl}/r/${parts.id}`,
      ...(options.password === undefined ? {} : { password: options.password }),
    };
    return transport.sendToRequest(source, { signal: options.signal, onProgress: options.onProgress, chunkSize: options.chunkSize }, destination);
  }

  /**
   * A share or request given by link or by id, with the {web_url} its link lives
   * under: the link's own, else the one the server announced (asked with GET /account
   * when the client has a key and none is known yet), else {base_url}.
   */
  private async linkParts(value: string, kind: 'share' | 'request', signal: AbortSignal | undefined): Promise<LinkParts> {
    if (isUrl(value)) {
      const parts = kind === 'share' ? shareOfUrl(new URL(value)) : requestOfUrl(new URL(value));
      if (!parts) throw new TypeError(`not a filehaven ${kind} link: ${value}`);
      return parts;
    }
    if (!this.webUrl && this.connection.key !== undefined) await this.account({ signal });
    return { webUrl: this.webUrl || this.server, id: ref(value, `${kind} id`) };
  }
}
