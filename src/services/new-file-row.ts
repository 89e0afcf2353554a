import { createHash } from 'node:crypto';
import { DuplicateError, type MetadataStore, type NewFile, type Repositories } from '../db/repositories/repositories.js';
import type { Clock, IdSource } from '../domain/ids.js';
import type { FileRecord } from '../domain/types.js';

/** A freshly created file with the one-time delete secret. */
export interface CreatedFile {
  file: FileRecord;
  deleteSecret: string;
}

/** What a new file row is made with. */
export interface NewFileRowDeps {
  store: MetadataStore;
  ids: IdSource;
  clock: Clock;
}

const ID_ATTEMPTS = 5;

/** The SHA-256 of a delete secret, as file rows keep it. */
export const deleteHashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');

/**
 * Creates a file row (an upload's or a copy's) with a fresh id and a one-time delete
 * secret: `create` runs in a transaction of its own with the row to insert (at the root:
 * it sets the folder) and returns the inserted file with whatever else the caller needs. A colliding random id
 * (36^10 ids make this vanishingly rare) runs the whole transaction again with another.
 */
export async function createFileRow<T extends { file: FileRecord }>(
  deps: NewFileRowDeps,
  fields: Pick<NewFile, 'ownerId' | 'name' | 'sha256' | 'size'>,
  create: (repos: Repositories, row: NewFile, now: number) => Promise<T>,
): Promise<T & { deleteSecret: string }> {
  const deleteSecret = deps.ids.deleteSecret();
  for (let attempt = 1; ; attempt++) {
    const now = deps.clock();
    const row: NewFile = { ...fields, id: deps.ids.fileId(), folderId: null, deleteHash: deleteHashOf(deleteSecret), createdAt: now };
    try {
      return { ...(await deps.store.transaction((repos) => create(repos, row, now))), deleteSecret };
    } catch (error) {
      if (error instanceof DuplicateError && attempt < ID_ATTEMPTS) continue;
      throw error;
    }
  }
}
