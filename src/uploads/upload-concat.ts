import { Readable } from 'node:stream';
import type { ResumableStorage } from '../blob/resumable-storage.js';
import type { ResumableUploadRecord } from '../db/repositories/repositories.js';

/*
 * tus's concatenation extension (parallel uploads), as the rows say it
 * (resumable_uploads.concat, migration 0018): a partial upload's bytes wait for a final
 * upload that names it; the final is a file made of its partials in the order it names
 * them. ResumableUploadsService.concatenate is the use case.
 */

/** `concat` of a partial upload; `partial;<final id>` once a final made it part of a file. */
export const PARTIAL = 'partial';

/** Whether the row is a partial upload (its bytes never become a file of their own). */
export function isPartial(record: Pick<ResumableUploadRecord, 'concat'>): boolean {
  return record.concat === PARTIAL || (record.concat?.startsWith(`${PARTIAL};`) ?? false);
}

/** `concat` of a partial upload that the final `finalId` made part of its file. */
export function concatenatedPartial(finalId: string): string {
  return `${PARTIAL};${finalId}`;
}

/** The final upload a partial became part of; null while it is none's. */
export function finalOfPartial(record: Pick<ResumableUploadRecord, 'concat'>): string | null {
  return record.concat?.startsWith(`${PARTIAL};`) ? record.concat.slice(PARTIAL.length + 1) : null;
}

/** `concat` of a final upload made of these partials, in order. */
export function finalConcat(partIds: readonly string[]): string {
  return `final;${partIds.join(' ')}`;
}

/** The partials a final upload was made of, in order; null for any other row. */
export function partsOfFinal(record: Pick<ResumableUploadRecord, 'concat'>): string[] | null {
  if (record.concat === null || !record.concat.startsWith('final;')) return null;
  return record.concat.slice('final;'.length).split(' ');
}

/**
 * The bytes of finished partial uploads one after another, each read from the store as
 * the previous one ends: one stream open at a time, and what is held in memory is the
 * store's read-ahead, whatever the sizes.
 */
export function concatenatedBytes(storage: ResumableStorage, parts: readonly Pick<ResumableUploadRecord, 'id' | 'length'>[]): Readable {
  async function* chunks(): AsyncGenerator<Buffer> {
    for (const part of parts) {
      const stream = await storage.readFinished(part.id, 0, part.length);
      let read = 0;
      for await (const chunk of stream) {
        read += (chunk as Buffer).length;
        yield chunk as Buffer;
      }
      // A store that ends early would make a shorter file with a digest that passes.
      if (read !== part.length) throw new Error(`partial upload ${part.id} holds ${read} bytes, not ${part.length}`);
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}
