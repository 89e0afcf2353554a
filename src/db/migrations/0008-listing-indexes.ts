import type { Kysely } from 'kysely';

/** An index this migration creates, and the one it makes redundant (a prefix of it). */
interface ListingIndex {
  name: string;
  table: 'files' | 'folders';
  columns: string[];
  replaces?: { name: string; columns: string[] };
}

/**
 * Every listing is a keyset page, newest first on (created_at, id), its cursor the
 * row-value range `(created_at, id) < (?, ?)` (repositories/files-repository.ts,
 * folders-repository.ts). Each index below holds a listing's equality filters followed by
 * created_at and id, so a page at any depth reads one range of about a page of entries,
 * already in order. With `files_owner (owner_id, created_at)` a page deep in a large
 * account walked from the newest file down to the cursor. A replaced index is a prefix of
 * its successor, which goes on serving its queries and the foreign-key checks on
 * folder_id and parent_id when a folder is removed.
 */
const INDEXES: ListingIndex[] = [
  // GET /files; the operator's list of one login's files.
  {
    name: 'files_owner_created',
    table: 'files',
    columns: ['owner_id', 'created_at', 'id'],
    replaces: { name: 'files_owner', columns: ['owner_id', 'created_at'] },
  },
  // GET /files?folder=root|<id>: `folder_id is null` is only narrow next to the owner.
  { name: 'files_owner_folder_created', table: 'files', columns: ['owner_id', 'folder_id', 'created_at', 'id'] },
  // A folder's page (any owner); inFolder, activeTotals, the emptiness check of a removal.
  { name: 'files_folder_created', table: 'files', columns: ['folder_id', 'created_at', 'id'], replaces: { name: 'files_folder', columns: ['folder_id'] } },
  // GET /folders.
  { name: 'folders_owner_created', table: 'folders', columns: ['owner_id', 'created_at', 'id'] },
  // GET /folders?parent=root|<id>.
  {
    name: 'folders_owner_parent_created',
    table: 'folders',
    columns: ['owner_id', 'parent_id', 'created_at', 'id'],
    replaces: { name: 'folders_owner', columns: ['owner_id', 'parent_id'] },
  },
  // A folder's sub-folders by name (folder page, removal): these scanned the whole table.
  { name: 'folders_parent', table: 'folders', columns: ['parent_id', 'name'] },
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const index of INDEXES) {
    await db.schema.createIndex(index.name).on(index.table).columns(index.columns).execute();
    if (index.replaces) await db.schema.dropIndex(index.replaces.name).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of [...INDEXES].reverse()) {
    if (index.replaces) await db.schema.createIndex(index.replaces.name).on(index.table).columns(index.replaces.columns).execute();
    await db.schema.dropIndex(index.name).execute();
  }
}
