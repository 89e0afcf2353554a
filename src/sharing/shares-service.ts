import { DuplicateError, type MetadataStore, type ShareChanges, type ShareRecord } from '../db/repositories/repositories.js';
import { errors } from '../domain/errors.js';
import { type ExpiresIn, expiryMoment, parseExpiresIn } from '../domain/expiry.js';
import { type Clock, type IdSource, LINK_ID_PATTERN } from '../domain/ids.js';
import { type Account, type FileRecord, FileStatus, type Folder } from '../domain/types.js';
import type { LinkPasswordThrottle } from '../limits/link-password-throttle.js';
import { hashPassword, verifyPassword } from '../security/passwords.js';
import type { AuditService } from '../services/audit-service.js';
import type { FilesService } from '../services/files-service.js';
import type { FoldersService } from '../services/folders-service.js';
import type { LinkAccess } from './link-access.js';
import type { ShareRefKind, ShareRefs } from './share-refs.js';

export interface SharesServiceDeps {
  store: MetadataStore;
  /** The central live-file lookup: a file deleted (or expired) is never a share's target. */
  files: Pick<FilesService, 'live'>;
  folders: Pick<FoldersService, 'owned' | 'ancestors'>;
  audit: Pick<AuditService, 'record'>;
  /** Wrong share passwords per address and per share. */
  throttle: Pick<LinkPasswordThrottle, 'attempt'>;
  /** The per-share cookie of a browser that gave the right password. */
  linkAccess: LinkAccess;
  /** The share-scoped references a folder share's page and paths carry instead of real ids. */
  refs: ShareRefs;
  ids: IdSource;
  clock: Clock;
  /** The operator's rules: a password on every share; the longest expiry (null = none). */
  rules: { passwordRequired: boolean; maxExpiryMs: number | null };
}

/** The form fields of a share's creation or change, as sent (undefined = absent). */
export interface ShareFields {
  file?: string;
  folder?: string;
  expiresIn?: string;
  password?: string;
  maxDownloads?: string;
  fast?: string;
}

/** A share with the name of what it shares (the feed entry's title). */
export interface ShareView {
  share: ShareRecord;
  /** The file's or folder's name; empty when the folder is gone. */
  title: string;
}

/** What a live share leads to, checked now. */
export type ShareTarget = { kind: 'file'; file: FileRecord } | { kind: 'folder'; folder: Folder };

/** How a request to use a share proves it knows the password. */
export interface ShareKey {
  /** The `Filehaven-Share-Password` header (or the page's form field); never the query string. */
  password?: string;
  /** The value of the share's LinkAccess cookie, if the browser sent one. */
  cookie?: string;
  /** The client address, for the guess throttle. */
  address: string;
}

/** Longest password accepted: far above any real one, far below what scrypt should chew on. */
const MAX_PASSWORD_LENGTH = 1024;
/** Largest download limit: any realistic one, and a safe integer on every engine. */
const MAX_DOWNLOADS = 1_000_000_000;

/**
 * Shares (issue 25, docs/api.md "Shares"): links to one file or one folder of their owner,
 * with an optional expiry, password and download limit. The owner's side (create, list,
 * get, change, revoke; another account's share is errorShareNotFound, every change in the
 * audit log) and the visitor's side (open a share, prove the password, find its target,
 * checked on every request, never by a sweeper). The download count is the download use
 * case's (downloads/share-counts.ts).
 *
 * `fast=1` is stored for any owner and takes effect only while the owner has premium
 * (checked per download, downloads/download-costs.ts): a share made fast keeps working,
 * at the free rules, when the premium period ends, and is fast again when it is renewed.
 */
export class SharesService {
  constructor(private readonly deps: SharesServiceDeps) {}

  /** Creates a share of one of the caller's active files or folders. */
  async create(caller: Account, fields: ShareFields): Promise<ShareView> {
    const { store, ids, clock, rules } = this.deps;
    const file = fields.file?.trim() || undefined;
    const folder = fields.folder?.trim() || undefined;
    if ((file === undefined) === (folder === undefined)) throw errors.wrongParameters('give exactly one of file and folder');
    const target = file !== undefined ? await this.ownedFile(caller, file) : await this.deps.folders.owned(caller, folder!);
    const now = clock();
    const expiresAt = expiryMoment(parseExpiresIn(fields.expiresIn, { zeroMeansNever: false }), {
      now,
      defaultMs: null,
      maxMs: rules.maxExpiryMs,
      what: 'A share',
    });
    const password = parsePassword(fields.password);
    if (password === null && rules.passwordRequired) throw errors.wrongParameters('this server requires a password on every share');
    const maxDownloads = parseMaxDownloads(fields.maxDownloads, false) ?? null;
    const fast = parseFast(fields.fast) ?? false;
    const passwordHash = password === null ? null : await hashPassword(password);
    for (let attempt = 1; ; attempt++) {
      try {
        const share = await store.shares.create({
          id: ids.linkId(),
          ownerId: caller.id,
          fileId: file !== undefined ? target.id : null,
          folderId: folder !== undefined ? target.id : null,
          passwordHash,
          expiresAt,
          maxDownloads,
          fast,
          createdAt: now,
        });
        await this.audit(caller, 'shares.create', share, `${file !== undefined ? 'file' : 'folder'}:${target.id} ${describe(share)}`);
        return { share, title: target.name };
      } catch (error) {
        // 131 random bits do not collide; a broken id source must not loop forever.
        if (error instanceof DuplicateError && attempt < 3) continue;
        throw error;
      }
    }
  }

  /** A page of the caller's live shares, newest first, and where the next page starts. */
  async list(caller: Account, query: { limit: number; after?: { createdAt: number; id: string } }) {
    const rows = await this.deps.store.shares.list({ ownerId: caller.id, before: query.after, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    const items = await Promise.all(page.map((share) => this.view(share)));
    return { items, next: rows.length > query.limit && last ? { createdAt: last.createdAt, id: last.id } : null };
  }

  /** One of the caller's live shares; errorShareNotFound for unknown, revoked and other accounts' ones. */
  async get(caller: Account, id: string): Promise<ShareView> {
    return this.view(await this.owned(caller, id));
  }

  /**
   * Changes one of the caller's shares: `expires_in` (`0` = never), `password` (empty =
   * none), `max_downloads` (`0` = unlimited), `fast`; absent fields stay. The count so far
   * stays. The operator's rules hold as at creation.
   */
  async change(caller: Account, id: string, fields: ShareFields): Promise<ShareView> {
    const { store, clock, rules } = this.deps;
    await this.owned(caller, id);
    if (fields.file !== undefined || fields.folder !== undefined) throw errors.wrongParameters("a share's file or folder cannot be changed; make a new share");
    const changes: ShareChanges = {};
    const asked: ExpiresIn = parseExpiresIn(fields.expiresIn, { zeroMeansNever: true });
    if (asked.kind !== 'absent') changes.expiresAt = expiryMoment(asked, { now: clock(), defaultMs: null, maxMs: rules.maxExpiryMs, what: 'A share' });
    if (fields.password !== undefined) {
      const password = parsePassword(fields.password);
      if (password === null && rules.passwordRequired) throw errors.wrongParameters('this server requires a password on every share');
      changes.passwordHash = password === null ? null : await hashPassword(password);
    }
    const maxDownloads = parseMaxDownloads(fields.maxDownloads, true);
    if (maxDownloads !== undefined) changes.maxDownloads = maxDownloads;
    const fast = parseFast(fields.fast);
    if (fast !== undefined) changes.fast = fast;
    const share = await store.shares.change(id, caller.id, changes);
    // Revoked between the look above and the change.
    if (!share) throw errors.shareNotFound();
    await this.audit(caller, 'shares.change', share, describe(share));
    return this.view(share);
  }

  /** Revokes one of the caller's shares: its link answers errorShareNotFound from now on, for good. */
  async revoke(caller: Account, id: string): Promise<ShareView> {
    const share = await this.owned(caller, id);
    if (!(await this.deps.store.shares.revoke(id, caller.id, this.deps.clock()))) throw errors.shareNotFound();
    await this.audit(caller, 'shares.revoke', share, '');
    return this.view({ ...share, revokedAt: this.deps.clock() });
  }

  /**
   * The share behind a link, for anyone, decided now: errorShareNotFound when unknown,
   * revoked or its owner's account is disabled (as the owner's direct links and upload
   * requests stop then), errorShareExpired from its expiry's millisecond on. Its password
   * and target are checked next (unlock, target).
   */
  async open(id: string): Promise<ShareRecord> {
    const share = LINK_ID_PATTERN.test(id) ? await this.deps.store.shares.byId(id) : null;
    if (!share || share.revokedAt !== null) throw errors.shareNotFound();
    if (share.expiresAt !== null && this.deps.clock() >= share.expiresAt) throw errors.shareExpired();
    const owner = await this.deps.store.accounts.byId(share.ownerId);
    if (!owner || owner.disabled) throw errors.shareNotFound();
    return share;
  }

  /** Whether the share needs a password that this request has not proven yet (the cookie counts). */
  locked(share: ShareRecord, cookie: string | undefined): boolean {
    return share.passwordHash !== null && !this.deps.linkAccess.opens(share.id, share.passwordHash, cookie);
  }

  /**
   * Lets a request through a protected share: the cookie of a browser that gave the right
   * password, or the password itself, compared in constant time (scrypt) as one throttled
   * guess. errorSharePassword (401) when missing or wrong, 429 once guesses are throttled.
   */
  async unlock(share: ShareRecord, key: ShareKey): Promise<void> {
    const hash = share.passwordHash;
    if (hash === null || !this.locked(share, key.cookie)) return;
    const password = key.password;
    // No password at all is no guess: it is only told the share is protected.
    if (password === undefined || password === '') throw errors.sharePassword();
    await this.deps.throttle.attempt(share.id, key.address, () =>
      password.length > MAX_PASSWORD_LENGTH ? Promise.resolve(false) : verifyPassword(password, hash),
    );
  }

  /** The cookie that opens a protected share for a browser that gave its password: name and value. */
  accessCookie(share: ShareRecord): { name: string; value: string } | null {
    if (share.passwordHash === null) return null;
    return { name: this.deps.linkAccess.cookieName(share.id), value: this.deps.linkAccess.token(share.id, share.passwordHash) };
  }

  /** The name of the share's access cookie. */
  cookieName(shareId: string): string {
    return this.deps.linkAccess.cookieName(shareId);
  }

  /**
   * What the share leads to now: its owner's file while it is active, or its owner's
   * folder while it exists. A file deleted, expired or blocked, or a folder removed, ends
   * the share: errorShareNotFound, as for a revoked one.
   */
  async target(share: ShareRecord): Promise<ShareTarget> {
    if (share.fileId !== null) {
      const file = await this.deps.files.live(share.fileId);
      if (!file || file.status !== FileStatus.Active || file.ownerId !== share.ownerId) throw errors.shareNotFound();
      return { kind: 'file', file };
    }
    const folder = share.folderId === null ? null : await this.deps.store.folders.byId(share.folderId);
    if (!folder || folder.ownerId !== share.ownerId) throw errors.shareNotFound();
    return { kind: 'folder', folder };
  }

  /**
   * The reference of a file or folder inside a folder share, for its page and paths: never
   * the real id, which is a permanent public link of its own (share-refs.ts).
   */
  ref(share: Pick<ShareRecord, 'id'>, kind: ShareRefKind, id: string): string {
    return this.deps.refs.ref(share.id, kind, id);
  }

  /** The id behind a reference of this share; null when it is not one (a real id is not one). */
  idOf(share: Pick<ShareRecord, 'id'>, kind: ShareRefKind, ref: string): string | null {
    return this.deps.refs.id(share.id, kind, ref);
  }

  /**
   * One file of a folder share, by its reference (ref()): an active file of the owner's
   * inside the shared folder or below it, now. Anything else (not a reference of this
   * share, a real id, unknown, deleted, expired, blocked, moved out) is errorFileNotFound:
   * the share goes on, that file is not part of it.
   */
  async fileIn(share: ShareRecord, folder: Folder, fileRef: string): Promise<FileRecord> {
    const fileId = this.idOf(share, 'file', fileRef);
    const file = fileId === null ? null : await this.deps.files.live(fileId);
    if (!file || file.status !== FileStatus.Active || file.ownerId !== share.ownerId || !(await this.within(file.folderId, folder))) {
      throw errors.fileNotFound();
    }
    return file;
  }

  /**
   * A folder of a folder share, by its reference: the shared folder or one below it, now.
   * Anything else (not a reference of this share, a real id, gone, moved out) is
   * errorFolderNotFound.
   */
  async folderIn(share: ShareRecord, top: Folder, folderRef: string): Promise<Folder> {
    const folderId = this.idOf(share, 'folder', folderRef);
    if (folderId === top.id) return top;
    const folder = folderId === null ? null : await this.deps.store.folders.byId(folderId);
    if (!folder || !(await this.within(folder.id, top))) throw errors.folderNotFound();
    return folder;
  }

  /** Whether the folder `folderId` is `top` or below it. */
  async within(folderId: string | null, top: Folder): Promise<boolean> {
    if (folderId === null) return false;
    if (folderId === top.id) return true;
    const folder = await this.deps.store.folders.byId(folderId);
    if (!folder || folder.ownerId !== top.ownerId) return false;
    return (await this.deps.folders.ancestors(folder)).some((above) => above.id === top.id);
  }

  /** The owner of a share (for the cost of its downloads); errorShareNotFound when the account is gone. */
  async owner(share: ShareRecord): Promise<Account> {
    const account = await this.deps.store.accounts.byId(share.ownerId);
    if (!account) throw errors.shareNotFound();
    return account;
  }

  private async owned(caller: Account, id: string): Promise<ShareRecord> {
    const share = LINK_ID_PATTERN.test(id) ? await this.deps.store.shares.byId(id) : null;
    if (!share || share.revokedAt !== null || share.ownerId !== caller.id) throw errors.shareNotFound();
    return share;
  }

  private async ownedFile(caller: Account, id: string): Promise<FileRecord> {
    const file = await this.deps.files.live(id);
    if (!file) throw errors.fileNotFound();
    if (file.ownerId !== caller.id) throw errors.permissionDenied('The file belongs to another account');
    if (file.status !== FileStatus.Active) throw errors.permissionDenied('Blocked files cannot be shared');
    return file;
  }

  private async view(share: ShareRecord): Promise<ShareView> {
    const { store } = this.deps;
    const row = share.fileId !== null ? await store.files.byId(share.fileId) : share.folderId !== null ? await store.folders.byId(share.folderId) : null;
    return { share, title: row?.name ?? '' };
  }

  private audit(caller: Account, action: string, share: ShareRecord, details: string): Promise<void> {
    return this.deps.audit.record({ actor: `account:${caller.login}`, action, object: `share:${share.id}`, details });
  }
}

/** The audit details of a share: never its password, only whether it has one. */
function describe(share: ShareRecord): string {
  return [
    `expires=${share.expiresAt === null ? 'never' : new Date(share.expiresAt).toISOString()}`,
    `max_downloads=${share.maxDownloads ?? 'unlimited'}`,
    `protected=${share.passwordHash === null ? 'no' : 'yes'}`,
    `fast=${share.fast ? 'yes' : 'no'}`,
  ].join(' ');
}

/** A password field: empty or absent is none (null). */
function parsePassword(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  if (raw.length > MAX_PASSWORD_LENGTH) throw errors.wrongParameters(`password must be at most ${MAX_PASSWORD_LENGTH} characters`);
  return raw;
}

/** `max_downloads`: a positive whole number; `0` (= unlimited, null) only on a change; undefined when absent. */
function parseMaxDownloads(raw: string | undefined, zeroMeansUnlimited: boolean): number | null | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim();
  const value = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (value === 0 && zeroMeansUnlimited) return null;
  if (!(value >= 1 && value <= MAX_DOWNLOADS)) {
    throw errors.wrongParameters(`max_downloads must be a whole number from 1 to ${MAX_DOWNLOADS}${zeroMeansUnlimited ? ', or 0 for unlimited' : ''}`);
  }
  return value;
}

/** `fast`: `1` or `0`; undefined when absent. */
function parseFast(raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (text === '1') return true;
  if (text === '0') return false;
  throw errors.wrongParameters('fast must be 1 or 0');
}
