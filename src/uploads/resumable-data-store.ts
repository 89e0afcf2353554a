import type { Readable } from 'node:stream';
import { DataStore, Upload } from '@tus/utils';
import type { ResumableStorage } from '../blob/resumable-storage.js';
import type { ResumableUploadsService } from './resumable-uploads-service.js';

/**
 * The tus DataStore @tus/server talks to: the backend's store (ResumableStorage), with
 * every write hashed as it passes (ResumableUploadsService.write) and every termination
 * ending the upload's row and reservation too. Uploads must declare their length when
 * created (no creation-defer-length): the whole length is reserved up front. A partial
 * upload (tus concatenation) is stored as any other; only the final is not tus's.
 */
export class ResumableDataStore extends DataStore {
  constructor(
    private readonly storage: ResumableStorage,
    private readonly uploads: ResumableUploadsService,
  ) {
    super();
    // checksum: verified by the route before the bytes reach the store (http/tus/upload-checksum.ts).
    // concatenation: partial uploads pass through @tus/server as any creation; the final is
    // ours (http/tus/post-handler.ts, ResumableUploadsService.concatenate).
    this.extensions = ['creation', 'creation-with-upload', 'termination', 'expiration', 'checksum', 'concatenation'];
  }

  override hasExtension(extension: string): boolean {
    // @tus/server 2.x refuses a creation with Upload-Concat unless its store has
    // 'concatentation' (sic): a partial upload's creation is then an ordinary one to it.
    return extension === 'concatentation' || super.hasExtension(extension);
  }

  override create(upload: Upload): Promise<Upload> {
    return this.storage.dataStore.create(upload);
  }

  override write(source: Readable, id: string, offset: number): Promise<number> {
    return this.uploads.write(id, source, offset, (hashed) => this.storage.dataStore.write(hashed, id, offset));
  }

  override async getUpload(id: string): Promise<Upload> {
    try {
      return await this.storage.dataStore.getUpload(id);
    } catch (error) {
      // An upload that became a file has left the tus store; @tus/server still asks after it
      // (creation-with-upload reads it back after finishing). It is whole.
      const stored = await this.uploads.storedUpload(id);
      if (!stored) throw error;
      return new Upload({ id, size: stored.length, offset: stored.length, creation_date: new Date(stored.createdAt).toISOString() });
    }
  }

  override remove(id: string): Promise<void> {
    return this.uploads.terminate(id);
  }

  override getExpiration(): number {
    return this.storage.dataStore.getExpiration();
  }

  override async deleteExpired(): Promise<number> {
    // gc removes expired uploads (ResumableUploadsService.expire): it knows which became files.
    return 0;
  }
}
