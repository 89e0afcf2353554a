import { Readable } from 'node:stream';
import type { Services } from '../../src/composition.js';
import type { Account } from '../../src/domain/types.js';
import type { CreatedFile } from '../../src/services/new-file-row.js';

/** Stores `bytes` as a file of `owner` at the top level through the upload use case, as an upload entry point does. */
export function storeUpload(services: Pick<Services, 'uploads'>, owner: Account, name: string, bytes: Buffer): Promise<CreatedFile> {
  return services.uploads.upload({
    owner,
    folder: null,
    source: { kind: 'stream', receive: async ({ stage }) => ({ staged: await stage(Readable.from([bytes])), name }) },
  });
}
