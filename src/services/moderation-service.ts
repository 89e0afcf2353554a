import type { BlacklistRepository, MetadataStore } from '../db/repositories/repositories.js';
import { InputError } from '../domain/errors.js';
import type { Clock } from '../domain/ids.js';
import { ID_PATTERN } from '../domain/ids.js';
import { matchesNamePattern, namePatternProblem, normalizeNamePattern } from '../domain/name-patterns.js';
import type { FileRecord, FileStatus, Folder } from '../domain/types.js';

export interface ModerationServiceDeps {
  store: MetadataStore;
  clock: Clock;
}

/** A blacklisted file-name pattern. */
export interface NamePatternEntry {
  /** Normalised pattern (lower case), with `*` and `?` wildcards. */
  pattern: string;
  /** Why it was listed (may be empty). */
  reason: string;
  /** When it was listed, epoch ms. */
  createdAt: number;
}

/** A file as an operator sees it: the row plus its owner's login. */
export interface OperatorFileView extends FileRecord {
  /** Login of the owning account ("" if the account is gone). */
  ownerLogin: string;
}

/** Everything `files info` shows. */
export interface OperatorFileInfo extends OperatorFileView {
  /** The folder the file sits in, or null for the owner's root. */
  folder: Pick<Folder, 'id' | 'name'> | null;
}

const MAX_LIST = 10_000;

/**
 * Operator-only use cases beside FilesService: the file-name blacklist (API.md 8) and
 * the file reports of the CLI. Digests stay in FilesService.blacklistAdd/Remove.
 */
export class ModerationService {
  constructor(private readonly deps: ModerationServiceDeps) {}

  /** Lists a file-name pattern; returns its stored (normalised) form. InputError if unusable. */
  async addNamePattern(raw: string, reason = ''): Promise<string> {
    const pattern = normalizeNamePattern(raw);
    const problem = namePatternProblem(pattern);
    if (problem) throw new InputError(problem);
    await this.deps.store.blacklist.addName(pattern, reason, this.deps.clock());
    return pattern;
  }

  /** Unlists a pattern (any case); InputError when it was not listed. */
  async removeNamePattern(raw: string): Promise<string> {
    const pattern = normalizeNamePattern(raw);
    if (!(await this.deps.store.blacklist.removeName(pattern))) {
      throw new InputError(`name pattern "${raw}" is not in the blacklist`);
    }
    return pattern;
  }

  /** The listed patterns, oldest first. */
  namePatterns(): Promise<NamePatternEntry[]> {
    return this.deps.store.blacklist.names();
  }

  /** The first listed pattern the (sanitised) name matches, or null. */
  blacklistedNamePattern(name: string): Promise<string | null> {
    return blacklistedNamePattern(this.deps.store.blacklist, name);
  }

  /** Files newest first, optionally of one login and in some states. */
  async listFiles(query: { login?: string; states?: FileStatus[]; limit: number; before?: string }): Promise<OperatorFileView[]> {
    if (!Number.isSafeInteger(query.limit) || query.limit < 1 || query.limit > MAX_LIST) {
      throw new InputError(`the limit must be a whole number from 1 to ${MAX_LIST}`);
    }
    let ownerId: number | undefined;
    if (query.login !== undefined) {
      const owner = await this.deps.store.accounts.byLogin(query.login);
      if (!owner) throw new InputError(`no account with login "${query.login}"`);
      ownerId = owner.id;
    }
    // The next page: the files listed after `before` (the last id of the page before).
    let before: { createdAt: number; id: string } | undefined;
    if (query.before !== undefined) {
      const last = ID_PATTERN.test(query.before) ? await this.deps.store.files.byId(query.before) : null;
      if (!last) throw new InputError(`no file with id "${query.before}"`);
      before = { createdAt: last.createdAt, id: last.id };
    }
    const files = await this.deps.store.files.list({ ownerId, states: query.states, limit: query.limit, before });
    const logins = await this.loginsOf(files.map((f) => f.ownerId));
    return files.map((file) => ({ ...file, ownerLogin: logins.get(file.ownerId) ?? '' }));
  }

  /** One file in any state, with owner and folder; InputError for an unknown id. */
  async fileInfo(id: string): Promise<OperatorFileInfo> {
    const file = ID_PATTERN.test(id) ? await this.deps.store.files.byId(id) : null;
    if (!file) throw new InputError(`no file with id "${id}"`);
    const [logins, folder] = await Promise.all([this.loginsOf([file.ownerId]), file.folderId === null ? null : this.deps.store.folders.byId(file.folderId)]);
    return {
      ...file,
      ownerLogin: logins.get(file.ownerId) ?? '',
      folder: file.folderId === null ? null : { id: file.folderId, name: folder?.name ?? '' },
    };
  }

  private async loginsOf(ids: number[]): Promise<Map<number, string>> {
    const unique = [...new Set(ids)];
    const accounts = await Promise.all(unique.map((id) => this.deps.store.accounts.byId(id)));
    return new Map(accounts.flatMap((a) => (a ? [[a.id, a.login] as const] : [])));
  }
}

/** The first listed pattern a sanitised file name matches, or null (used by the upload use case, uploads/). */
export async function blacklistedNamePattern(blacklist: BlacklistRepository, name: string): Promise<string | null> {
  const entries = await blacklist.names();
  return entries.find((entry) => matchesNamePattern(entry.pattern, name))?.pattern ?? null;
}
