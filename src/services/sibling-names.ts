import type { NameScope, Repositories } from '../db/repositories/repositories.js';
import { numberedNames } from '../domain/names.js';

/**
 * A name already used by a sibling where names are kept unique (docs/web.md "Managing My files": folder
 * names among sibling folders, file names on a rename). Not an ApiError: the API never
 * refuses a name as taken (SPEC.md lets uploads, copies and moves repeat names), so only
 * the web shows it, with a free name to take instead.
 */
export class NameTakenError extends Error {
  constructor(
    /** The name asked for. */
    readonly taken: string,
    /** A numbered variant that was free when checked ("report (2).pdf"), or null if none of the first few was. */
    readonly suggestion: string | null,
    /** Whose name it is: a file or a folder. */
    readonly kind: 'file' | 'folder',
  ) {
    super(`A ${kind} named “${taken}” is already there`);
  }
}

/** How many numbered variants one lookup tries. */
const SUGGESTIONS = 20;

/**
 * Takes the lock that orders every check of the names in `scope` (a folder's lock, or the
 * account's top level). Hold it before `assertFree`, in the same transaction as the write.
 */
export async function lockNames(repos: Repositories, scope: NameScope): Promise<void> {
  await (scope.folderId === null ? repos.locks.top(scope.ownerId) : repos.locks.folder(scope.folderId));
}

/** Throws NameTakenError, with a free numbered name, when a sibling of `kind` in `scope` carries `name`. */
export async function assertFree(repos: Repositories, kind: 'file' | 'folder', scope: NameScope, name: string): Promise<void> {
  const table = kind === 'file' ? repos.files : repos.folders;
  if (!(await table.namesTaken(scope, [name])).has(name)) return;
  const candidates = numberedNames(name, SUGGESTIONS, { extension: kind === 'file' });
  const taken = await table.namesTaken(scope, candidates);
  throw new NameTakenError(name, candidates.find((candidate) => !taken.has(candidate)) ?? null, kind);
}
