import type { MetadataStore, NameScope, Repositories } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import { splitExtension } from '../domain/names.js';
import type { Account, FileRecord, Folder } from '../domain/types.js';
import { type DavPath, davPath } from './dav-path.js';

/** A resource of an account's WebDAV tree (issue 27). */
export type DavResource =
  | { kind: 'top'; path: DavPath; key: 'top' }
  | { kind: 'folder'; path: DavPath; key: string; folder: Folder }
  | { kind: 'file'; path: DavPath; key: string; file: FileRecord };

/** A collection: the top or a folder. */
export type DavCollection = Extract<DavResource, { kind: 'top' | 'folder' }>;

/** The key dead properties and lock checks name a resource by: what it is, not where. */
export const resourceKey = {
  file: (id: string) => `file:${id}`,
  folder: (id: string) => `folder:${id}`,
  top: 'top' as const,
};

/*
 * Names (docs/webdav.md "Names"). The API lets two files of a folder share a name, and a
 * folder name may hold "/"; a WebDAV path must name one resource. So, among the folders
 * and active files of one folder:
 * - a folder shows its name with "/" as "∕" (U+2215) and "\" as "⧵" (U+29F5);
 * - the oldest folder of a shown name keeps it; then, if no folder has it, the oldest
 *   file; every other one carries its id: "name (<id>)" for a folder, "stem (<id>).ext"
 *   for a file.
 * A resource's path changes only when one of its namesakes older than it goes, or when it
 * is renamed or moved. WebDAV never makes namesakes itself: a PUT onto a name replaces
 * the file there, and MOVE and COPY onto one overwrite it (or are refused).
 */

/** A folder's name as the tree shows it. */
export function shownFolderName(name: string): string {
  return name.replaceAll('/', '\u2215').replaceAll('\\', '\u29f5');
}

/** "stem (<id>).ext" for a file, "name (<id>)" for a folder: a namesake's own name. */
export function idName(name: string, id: string, extension: boolean): string {
  const [stem, ext] = splitExtension(name, extension);
  return `${stem} (${id})${ext}`;
}

/** The names one folder's children show, from its folders and its files, each oldest first. */
export function shownNames(folders: readonly Folder[], files: readonly FileRecord[]): Map<string, string> {
  const taken = new Set<string>();
  const names = new Map<string, string>();
  for (const folder of folders) {
    const shown = shownFolderName(folder.name);
    const name = taken.has(shown) ? idName(shown, folder.id, false) : shown;
    taken.add(name);
    names.set(resourceKey.folder(folder.id), name);
  }
  for (const file of files) {
    const name = taken.has(file.name) ? idName(file.name, file.id, true) : file.name;
    taken.add(name);
    names.set(resourceKey.file(file.id), name);
  }
  return names;
}

// "anything (ID)" with an optional extension after it: a namesake's name.
const ID_NAME = /^(.*) \(([A-Z0-9]{10})\)(\.[^.]*)?$/;

/** Rows in the order names are handed out: oldest first (created_at, then id), as the repositories list them. */
function oldestFirst<T extends { createdAt: number; id: string }>(items: Iterable<T>): T[] {
  return [...items].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
}

/** Files read per query while listing a folder. */
const PAGE = 1000;

/**
 * The account's tree as WebDAV sees it: its folders as collections, its active files as
 * resources, the top folder at "/". Reads only; the writes are the services' (uploads,
 * files, folders), which the handlers call with what this resolves.
 */
export class DavTree {
  constructor(private readonly deps: { store: MetadataStore; clock: Clock }) {}

  /** The top of `owner`'s tree. */
  top(): DavCollection {
    return { kind: 'top', path: davPath([]), key: resourceKey.top };
  }

  /** The resource at `path`, or null when nothing is there (or a step on the way is a file). */
  async resolve(owner: Account, path: DavPath, repos: Repositories = this.deps.store): Promise<DavResource | null> {
    let at: DavResource = this.top();
    for (const name of path.names) {
      if (at.kind === 'file') return null;
      const child = await this.child(owner, at, name, repos);
      if (!child) return null;
      at = child;
    }
    return at;
  }

  /** The child named `name` of a collection, or null. */
  async child(owner: Account, parent: DavCollection, name: string, repos: Repositories = this.deps.store): Promise<DavResource | null> {
    const scope = this.scope(owner, parent);
    // Every stored name that could show as `name`: the name itself, and what is left after
    // taking off its trailing "(<id>)" groups one by one ("a (X) (Y).txt", "a (X).txt",
    // "a.txt"). Named together, in the listing's order, they get the names children()
    // gives them: a file stored as "a (X).txt" never takes the path of namesake X.
    const groups = [name];
    for (let match = ID_NAME.exec(name); match; match = ID_NAME.exec(groups.at(-1)!)) {
      groups.push(`${match[1]}${match[3] ?? ''}`);
      if (groups.length > 8) break;
    }
    const folders = new Map<string, Folder>();
    const files = new Map<string, FileRecord>();
    for (const group of groups) {
      const [groupFolders, groupFiles] = await this.namesakes(scope, group, repos);
      for (const folder of groupFolders) folders.set(folder.id, folder);
      for (const file of groupFiles) files.set(file.id, file);
    }
    const names = shownNames(oldestFirst(folders.values()), oldestFirst(files.values()));
    for (const folder of folders.values()) if (names.get(resourceKey.folder(folder.id)) === name) return this.folderAt(parent, name, folder);
    for (const file of files.values()) if (names.get(resourceKey.file(file.id)) === name) return this.fileAt(parent, name, file);
    return null;
  }

  /**
   * Every child of a collection with the name it shows, folders first then files, each
   * oldest first. Reads the folder's files in pages; holds their records (a listing
   * answers for all of them at once).
   */
  async children(owner: Account, parent: DavCollection, repos: Repositories = this.deps.store): Promise<DavResource[]> {
    const scope = this.scope(owner, parent);
    const folders = await repos.folders.within(scope);
    const files: FileRecord[] = [];
    for (;;) {
      const last = files.at(-1);
      const page = await repos.files.activeIn(scope, { after: last ? { createdAt: last.createdAt, id: last.id } : undefined, limit: PAGE });
      files.push(...page);
      if (page.length < PAGE) break;
    }
    const names = shownNames(folders, files);
    return [
      ...folders.map((folder) => this.folderAt(parent, names.get(resourceKey.folder(folder.id))!, folder)),
      ...files.map((file) => this.fileAt(parent, names.get(resourceKey.file(file.id))!, file)),
    ];
  }

  /** The folders and active files of a scope that a name `shown` could belong to. */
  private async namesakes(scope: NameScope, shown: string, repos: Repositories): Promise<[Folder[], FileRecord[]]> {
    // A shown folder name may stand for a stored one with "/" or "\" in it.
    const stored = shown.replaceAll('\u2215', '/').replaceAll('\u29f5', '\\');
    const folders = await repos.folders.within(scope, shown);
    if (stored !== shown) folders.push(...(await repos.folders.within(scope, stored)));
    const files = await repos.files.activeIn(scope, { name: shown, limit: 100_000 });
    return [oldestFirst(folders).filter((folder) => shownFolderName(folder.name) === shown), files];
  }

  private scope(owner: Account, parent: DavCollection): NameScope {
    return { ownerId: owner.id, folderId: parent.kind === 'folder' ? parent.folder.id : null, liveAt: this.deps.clock() };
  }

  private folderAt(parent: DavCollection, name: string, folder: Folder): DavResource {
    return { kind: 'folder', path: davPath([...parent.path.names, name], true), key: resourceKey.folder(folder.id), folder };
  }

  private fileAt(parent: DavCollection, name: string, file: FileRecord): DavResource {
    return { kind: 'file', path: davPath([...parent.path.names, name]), key: resourceKey.file(file.id), file };
  }
}
