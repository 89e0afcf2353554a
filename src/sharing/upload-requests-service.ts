import { pipeline, type Readable, Transform } from 'node:stream';
import type { MetadataStore, UploadRequestChanges, UploadRequestRecord } from '../db/repositories/repositories.js';
import { errors } from '../domain/errors.js';
import { type ExpiresIn, expiryMoment, parseExpiresIn } from '../domain/expiry.js';
import { type Clock, type IdSource, LINK_ID_PATTERN } from '../domain/ids.js';
import type { Account, FileRecord, Folder } from '../domain/types.js';
import type { LinkPasswordThrottle } from '../limits/link-password-throttle.js';
import { hashPassword, verifyPassword } from '../security/passwords.js';
import type { AuditService } from '../services/audit-service.js';
import type { StreamSource, UploadInput } from '../uploads/upload-input.js';
import type { UploadsService } from '../uploads/uploads-service.js';
import type { LinkAccess } from './link-access.js';
import { type RequestSlots, settleSlot } from './request-slots.js';

/** The form fields of a creation or a change, as sent (undefined when absent). */
export interface UploadRequestFields {
  folder?: string;
  title?: string;
  message?: string;
  expiresIn?: string;
  password?: string;
  maxFiles?: string;
  maxBytes?: string;
  maxFileSize?: string;
}

/** How someone using a request's link proves they may: the password, or the cookie of an earlier right one. */
export interface LinkCredentials {
  /** The `Filehaven-Share-Password` header (or the page's password form). */
  password?: string;
  /** The LinkAccess cookie's value. */
  token?: string;
  /** The client's address, for the guess throttle. */
  ip: string;
}

export interface UploadRequestsDeps {
  store: MetadataStore;
  ids: IdSource;
  clock: Clock;
  /** The operator's settings of issue 25. */
  settings: { uploadRequests: boolean; sharePasswordRequired: boolean; shareMaxExpiryMs: number | null };
  folders: { owned(owner: Account, id: string): Promise<Folder> };
  accounts: { activeAccount(id: number): Promise<Account | null> };
  uploads: Pick<UploadsService, 'upload'>;
  slots: RequestSlots;
  linkAccess: LinkAccess;
  linkPasswords: Pick<LinkPasswordThrottle, 'attempt'>;
  audit: Pick<AuditService, 'record'>;
}

/** Page sizes of the owner's list, as GET /files. */
export interface RequestPage {
  items: UploadRequestRecord[];
  /** Where the next page starts; null on the last. */
  next: { createdAt: number; id: string } | null;
}

const MAX_TITLE = 255;
const MAX_MESSAGE = 4000;
const MAX_PASSWORD = 1024;
/** Control characters XML 1.0 cannot carry (and a title has no use for): refused, not dropped. */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * Upload requests (issue 25): links where others upload into the owner's folder. The
 * owner creates, lists, changes and closes them (another account's is errorShareNotFound);
 * anyone with the link (and its password) uploads through `upload`, an entry point of the
 * one upload use case: the file is the owner's, in the request's folder, counted against
 * the owner's volume and refused by the owner's limits, and the request's own max_files,
 * max_bytes and max_file_size hold exactly (RequestSlots).
 */
export class UploadRequestsService {
  constructor(private readonly deps: UploadRequestsDeps) {}

  /** Opens a request in one of the owner's folders (or the top). */
  async create(owner: Account, fields: UploadRequestFields): Promise<UploadRequestRecord> {
    if (!this.deps.settings.uploadRequests) throw errors.permissionDenied('Upload requests are turned off on this server');
    const folderId = fields.folder === undefined || fields.folder === '' ? null : (await this.deps.folders.owned(owner, fields.folder)).id;
    const now = this.deps.clock();
    const password = fields.password ?? '';
    if (password === '' && this.deps.settings.sharePasswordRequired) throw errors.wrongParameters('password is required on this server');
    const record = await this.deps.store.uploadRequests.create({
      id: this.deps.ids.linkId(),
      ownerId: owner.id,
      folderId,
      title: text(fields.title, 'title', MAX_TITLE),
      message: text(fields.message, 'message', MAX_MESSAGE),
      passwordHash: password === '' ? null : await hashPassword(checkedPassword(password)),
      expiresAt: this.expiry(parseExpiresIn(fields.expiresIn, { zeroMeansNever: false }), now),
      maxFiles: limit(fields.maxFiles, 'max_files', false) ?? null,
      maxBytes: limit(fields.maxBytes, 'max_bytes', false) ?? null,
      maxFileSize: limit(fields.maxFileSize, 'max_file_size', false) ?? null,
      createdAt: now,
    });
    await this.audit(owner, 'requests.create', record, describe(record));
    return record;
  }

  /** The owner's open requests, newest first, a page at a time. */
  async list(owner: Account, query: { limit: number; after?: { createdAt: number; id: string } }): Promise<RequestPage> {
    const rows = await this.deps.store.uploadRequests.listOwned(owner.id, { limit: query.limit + 1, before: query.after });
    const items = rows.slice(0, query.limit);
    const last = items.at(-1);
    return { items, next: rows.length > query.limit && last ? { createdAt: last.createdAt, id: last.id } : null };
  }

  /** One of the owner's open requests; errorShareNotFound for another account's, a closed or an unknown one. */
  async owned(owner: Account, id: string): Promise<UploadRequestRecord> {
    const record = LINK_ID_PATTERN.test(id) ? await this.deps.store.uploadRequests.byId(id) : null;
    if (!record || record.closed || record.ownerId !== owner.id) throw errors.requestNotFound();
    return record;
  }

  /**
   * Changes a request: `expires_in` (0 = never), `password` (empty = none), `max_files`,
   * `max_bytes`, `max_file_size` (0 = unlimited), `title`, `message`; the counts stay.
   * Every field is checked before anything is written.
   */
  async change(owner: Account, id: string, fields: UploadRequestFields): Promise<UploadRequestRecord> {
    await this.owned(owner, id);
    const now = this.deps.clock();
    const changes: UploadRequestChanges = {};
    if (fields.title !== undefined) changes.title = text(fields.title, 'title', MAX_TITLE);
    if (fields.message !== undefined) changes.message = text(fields.message, 'message', MAX_MESSAGE);
    const asked = parseExpiresIn(fields.expiresIn, { zeroMeansNever: true });
    if (asked.kind !== 'absent') changes.expiresAt = this.expiry(asked, now);
    const maxFiles = limit(fields.maxFiles, 'max_files', true);
    if (maxFiles !== undefined) changes.maxFiles = maxFiles;
    const maxBytes = limit(fields.maxBytes, 'max_bytes', true);
    if (maxBytes !== undefined) changes.maxBytes = maxBytes;
    const maxFileSize = limit(fields.maxFileSize, 'max_file_size', true);
    if (maxFileSize !== undefined) changes.maxFileSize = maxFileSize;
    if (fields.password !== undefined) {
      if (fields.password === '' && this.deps.settings.sharePasswordRequired) throw errors.wrongParameters('password is required on this server');
      changes.passwordHash = fields.password === '' ? null : await hashPassword(checkedPassword(fields.password));
    }
    // Under the request's lock: a change of a limit is one step with the checks against it.
    const changed = await this.deps.store.transaction(async (repos) => {
      await repos.locks.request(id);
      const current = await repos.uploadRequests.byId(id);
      if (!current || current.closed || current.ownerId !== owner.id) throw errors.requestNotFound();
      await repos.uploadRequests.change(id, changes);
      return (await repos.uploadRequests.byId(id))!;
    });
    await this.audit(owner, 'requests.change', changed, describeChanges(changes));
    return changed;
  }

  /** Closes a request: its link takes nothing more; the files stored through it stay. */
  async close(owner: Account, id: string): Promise<UploadRequestRecord> {
    const record = await this.owned(owner, id);
    const closed = await this.deps.store.transaction(async (repos) => {
      await repos.locks.request(id);
      return repos.uploadRequests.close(id);
    });
    if (!closed) throw errors.requestNotFound();
    await this.audit(owner, 'requests.close', record, `files=${record.files} bytes=${record.bytes}`);
    return { ...record, closed: true };
  }

  /**
   * The request behind a link, for anyone holding it, before its password: errorPermissionDenied
   * when the server has upload requests off, errorShareNotFound when unknown, closed or its
   * owner disabled, errorShareExpired from the moment it expires (decided now, per request).
   */
  async open(id: string): Promise<UploadRequestRecord> {
    if (!this.deps.settings.uploadRequests) throw errors.permissionDenied('Upload requests are turned off on this server');
    const record = LINK_ID_PATTERN.test(id) ? await this.deps.store.uploadRequests.byId(id) : null;
    if (!record || record.closed || !(await this.deps.accounts.activeAccount(record.ownerId))) throw errors.requestNotFound();
    if (record.expiresAt !== null && this.deps.clock() >= record.expiresAt) throw errors.requestExpired();
    return record;
  }

  /**
   * `open`, then the password of a protected request: the LinkAccess cookie of an earlier
   * right guess, else the password given (counted by the guess throttle; errorSharePassword
   * 401 when missing or wrong, 429 when throttled).
   */
  async unlock(id: string, credentials: LinkCredentials): Promise<UploadRequestRecord> {
    const record = await this.open(id);
    const hash = record.passwordHash;
    if (hash === null || this.deps.linkAccess.opens(record.id, hash, credentials.token)) return record;
    const password = credentials.password;
    if (password === undefined || password === '') throw errors.sharePassword();
    await this.deps.linkPasswords.attempt(record.id, credentials.ip, () => verifyPassword(password, hash));
    return record;
  }

  /**
   * `unlock`, and the request's owner: whose file an upload into it becomes (a resumable
   * upload's creation and its later requests act as the owner, on this request only).
   */
  async uploader(id: string, credentials: LinkCredentials): Promise<{ record: UploadRequestRecord; owner: Account }> {
    const record = await this.unlock(id, credentials);
    const owner = await this.deps.accounts.activeAccount(record.ownerId);
    if (!owner) throw errors.requestNotFound();
    return { record, owner };
  }

  /** The cookie (name and value) that opens a protected request after a right password; null for an open one. */
  accessCookie(record: UploadRequestRecord): { name: string; value: string } | null {
    if (record.passwordHash === null) return null;
    return { name: this.deps.linkAccess.cookieName(record.id), value: this.deps.linkAccess.token(record.id, record.passwordHash) };
  }

  /** The name of the cookie a request's page may carry (LinkAccess). */
  cookieName(id: string): string {
    return this.deps.linkAccess.cookieName(id);
  }

  /**
   * Stores bytes sent through a request (already unlocked) as the owner's file in the
   * request's folder. The request's slot is taken first (errorUploadLimit when full), then
   * the one upload use case runs with the owner's limits and the request's max_file_size;
   * a file past the bytes its slot holds is cut with errorUploadLimit; the slot becomes the
   * request's counts in the file's transaction, or goes if the upload fails.
   */
  async upload(record: UploadRequestRecord, source: StreamSource): Promise<FileRecord> {
    const owner = await this.deps.accounts.activeAccount(record.ownerId);
    if (!owner) throw errors.requestNotFound();
    const slot = await this.deps.slots.reserve(record.id, { declaredBytes: source.declaredBytes, exact: false });
    try {
      const { file } = await this.deps.uploads.upload({
        ...this.inputFor(record, owner, slot.id),
        source: slot.bytes === null ? source : capped(source, slot.bytes),
      });
      this.deps.slots.stored(slot.id);
      return file;
    } catch (error) {
      await this.deps.slots.release(slot.id);
      throw error;
    }
  }

  /**
   * What an upload into `record` hands the upload use case besides its source: the owner,
   * the request's folder, its max_file_size, and the slot's settlement in the file's
   * transaction (also for a resumable upload's finish).
   */
  inputFor(record: UploadRequestRecord, owner: Account, slotId: number): Omit<UploadInput, 'source'> {
    return {
      owner,
      folder: record.folderId === null ? null : { id: record.folderId, ifGone: 'refuse' },
      ...(record.maxFileSize === null ? {} : { limits: { maxFileSize: record.maxFileSize } }),
      within: async (repos, file) => {
        await settleSlot(repos, this.deps.clock(), record.id, slotId, file.size);
      },
    };
  }

  private expiry(asked: ExpiresIn, now: number): number | null {
    return expiryMoment(asked, { now, defaultMs: null, maxMs: this.deps.settings.shareMaxExpiryMs, what: 'An upload request' });
  }

  private async audit(owner: Account, action: string, record: UploadRequestRecord, details: string): Promise<void> {
    await this.deps.audit.record({ actor: `account:${owner.login}`, action, object: `request:${record.id}`, details });
  }
}

/** A title or message: at most `max` characters, no control characters but newlines and tabs. */
function text(raw: string | undefined, name: string, max: number): string {
  const value = (raw ?? '').trim();
  if (value.length > max) throw errors.wrongParameters(`${name} must be at most ${max} characters`);
  if (CONTROL.test(value)) throw errors.wrongParameters(`${name} must not contain control characters`);
  return value;
}

function checkedPassword(password: string): string {
  if (password.length > MAX_PASSWORD) throw errors.wrongParameters(`password must be at most ${MAX_PASSWORD} characters`);
  return password;
}

/**
 * A limit field: a whole number, at least 1; `0` means unlimited (null) only in a change.
 * Undefined when absent.
 */
function limit(raw: string | undefined, name: string, zeroMeansUnlimited: boolean): number | null | undefined {
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (!/^\d{1,15}$/.test(value)) throw errors.wrongParameters(`${name} must be a whole number`);
  const n = Number(value);
  if (n === 0) {
    if (zeroMeansUnlimited) return null;
    throw errors.wrongParameters(`${name} must be at least 1 (leave it out for no limit)`);
  }
  return n;
}

/** What the audit log says of a new request: its settings, never its password. */
function describe(record: UploadRequestRecord): string {
  const show = (value: number | null) => (value === null ? 'none' : String(value));
  return [
    `folder=${record.folderId ?? 'top'}`,
    `expires=${record.expiresAt === null ? 'never' : new Date(record.expiresAt).toISOString()}`,
    `max_files=${show(record.maxFiles)}`,
    `max_bytes=${show(record.maxBytes)}`,
    `max_file_size=${show(record.maxFileSize)}`,
    `protected=${record.passwordHash === null ? 'no' : 'yes'}`,
  ].join(' ');
}

/** What a change changed, by name; a password only as set or removed. */
function describeChanges(changes: UploadRequestChanges): string {
  const parts: string[] = [];
  if (changes.title !== undefined) parts.push('title');
  if (changes.message !== undefined) parts.push('message');
  if (changes.expiresAt !== undefined) parts.push(`expires=${changes.expiresAt === null ? 'never' : new Date(changes.expiresAt).toISOString()}`);
  for (const [name, value] of [
    ['max_files', changes.maxFiles],
    ['max_bytes', changes.maxBytes],
    ['max_file_size', changes.maxFileSize],
  ] as const) {
    if (value !== undefined) parts.push(`${name}=${value === null ? 'none' : value}`);
  }
  if (changes.passwordHash !== undefined) parts.push(changes.passwordHash === null ? 'password removed' : 'password set');
  return parts.join(' ') || 'nothing';
}

/**
 * A stream source cut at `bytes`: a file that passes the bytes its slot holds of the
 * request's max_bytes fails with errorUploadLimit there, and the staging is aborted.
 */
function capped(source: StreamSource, bytes: number): StreamSource {
  return {
    ...source,
    receive: (tools) =>
      source.receive({
        ...tools,
        stage: (stream, signal) => tools.stage(cut(stream, bytes), signal),
      }),
  };
}

function cut(source: Readable, max: number): Readable {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > max) return callback(errors.requestFull());
      callback(null, chunk);
    },
  });
  // Errors travel both ways, as the volume meter's do (limits/upload-volume.ts).
  pipeline(source, counter, () => {});
  return counter;
}
