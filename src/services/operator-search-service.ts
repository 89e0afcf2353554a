import type { MetadataStore } from '../db/repositories/repositories.js';
import { InputError } from '../domain/errors.js';
import type { Account, FileStatus } from '../domain/types.js';
import type { OperatorFileView } from './moderation-service.js';

export interface OperatorSearchServiceDeps {
  store: MetadataStore;
}

/** One page of a listing and where the next one starts (null on the last page). */
export interface SearchPage<T, Cursor> {
  items: T[];
  next: Cursor | null;
}

/** What the console's file search takes; every part optional but the page size. */
export interface FileSearchInput {
  /** Part of the name (ASCII case ignored). */
  name?: string;
  /** The owner's login, exactly. */
  owner?: string;
  /** The content's SHA-256 (64 hex, any case). */
  sha256?: string;
  states?: FileStatus[];
  before?: { createdAt: number; id: string };
  limit: number;
}

/** Where one content (digest) is used. */
export interface DigestUsage {
  sha256: string;
  /** Whether the store holds the bytes (a blob row exists). */
  stored: boolean;
  /** Whether uploads of it are refused. */
  blacklisted: boolean;
  /** The files pointing at it, any state, newest first. */
  files: SearchPage<OperatorFileView, { createdAt: number; id: string }>;
}

const MAX_PAGE = 500;
const MAX_TEXT = 255;
const DIGEST = /^[0-9a-f]{64}$/;

/** The operator's read-only searches: accounts, files, and where a content is used. */
export class OperatorSearchService {
  constructor(private readonly deps: OperatorSearchServiceDeps) {}

  /** Accounts whose login, name or e-mail contains `text`, by id. */
  async accounts(query: { text?: string; afterId?: number; limit: number }): Promise<SearchPage<Account, number>> {
    const limit = pageSize(query.limit);
    const text = searchText(query.text, 'search');
    const rows = await this.deps.store.operatorQueries.searchAccounts({ text, afterId: query.afterId, limit: limit + 1 });
    const items = rows.slice(0, limit);
    return { items, next: rows.length > limit ? items.at(-1)!.id : null };
  }

  /** The account with this login, or null. */
  accountByLogin(login: string): Promise<Account | null> {
    return this.deps.store.accounts.byLogin(login);
  }

  /** Files in any state matching every part given, newest first. */
  async files(query: FileSearchInput): Promise<SearchPage<OperatorFileView, { createdAt: number; id: string }>> {
    const limit = pageSize(query.limit);
    let ownerId: number | undefined;
    if (query.owner) {
      const owner = await this.deps.store.accounts.byLogin(query.owner.trim());
      if (!owner) throw new InputError(`no account with login "${query.owner}"`);
      ownerId = owner.id;
    }
    const rows = await this.deps.store.operatorQueries.searchFiles({
      name: searchText(query.name, 'name'),
      ownerId,
      sha256: query.sha256 ? digestOf(query.sha256) : undefined,
      states: query.states,
      before: query.before,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const logins = await this.loginsOf(page.map((f) => f.ownerId));
    const items = page.map((file) => ({ ...file, ownerLogin: logins.get(file.ownerId) ?? '' }));
    const last = items.at(-1);
    return { items, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
  }

  /** The files using a digest, whether its bytes are stored, whether it is blacklisted. */
  async digest(sha256: string, page: { before?: { createdAt: number; id: string }; limit: number }): Promise<DigestUsage> {
    const digest = digestOf(sha256);
    const [files, key, blacklisted] = await Promise.all([
      this.files({ sha256: digest, ...page }),
      this.deps.store.blobs.keyOf(digest),
      this.deps.store.blacklist.has(digest),
    ]);
    return { sha256: digest, stored: key !== null, blacklisted, files };
  }

  private async loginsOf(ids: number[]): Promise<Map<number, string>> {
    const accounts = await Promise.all([...new Set(ids)].map((id) => this.deps.store.accounts.byId(id)));
    return new Map(accounts.flatMap((a) => (a ? [[a.id, a.login] as const] : [])));
  }
}

function pageSize(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) throw new InputError(`the page size must be a whole number from 1 to ${MAX_PAGE}`);
  return limit;
}

/** Trimmed search text, undefined when empty; InputError when absurdly long. */
function searchText(text: string | undefined, what: string): string | undefined {
  const trimmed = text?.trim() ?? '';
  if (trimmed.length > MAX_TEXT) throw new InputError(`the ${what} text must be at most ${MAX_TEXT} characters`);
  return trimmed || undefined;
}

/** A digest as stored (lower-case hex); InputError for anything else. */
export function digestOf(text: string): string {
  const digest = text.trim().toLowerCase();
  if (!DIGEST.test(digest)) throw new InputError('a SHA-256 digest is 64 hexadecimal characters');
  return digest;
}
