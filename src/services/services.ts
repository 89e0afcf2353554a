import { mkdir } from 'node:fs/promises';
import type { BlobStore } from '../blob/blob-store.js';
import { LocalBlobStore } from '../blob/local-blob-store.js';
import type { Config } from '../config/config.js';
import { loadOrCreateSecret } from '../config/secret-file.js';
import { openSqlite } from '../db/dialect.js';
import { openMetadataStore } from '../db/metadata-store.js';
import type { MetadataStore } from '../db/repositories/repositories.js';
import { cryptoIds, systemClock, type Clock, type IdSource } from '../domain/ids.js';
import { ServerSecrets } from '../security/secrets.js';
import { AccountsService } from './accounts-service.js';
import { DownloadsService } from './downloads-service.js';
import { FilesService } from './files-service.js';
import { FoldersService } from './folders-service.js';

/** Everything the HTTP layer and the CLI call; one instance per process. */
export interface Services {
  config: Config;
  store: MetadataStore;
  blobs: BlobStore;
  clock: Clock;
  accounts: AccountsService;
  files: FilesService;
  folders: FoldersService;
  downloads: DownloadsService;
  /** Closes the database. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  clock?: Clock;
  ids?: IdSource;
  log?: (error: unknown, message: string) => void;
}

/** The composition root: storage backends chosen from config, services wired to them. */
export async function openServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? cryptoIds;
  const log = options.log ?? ((error, message) => console.error(message, error));
  await mkdir(config.dataDir, { recursive: true });
  const secrets = new ServerSecrets(await loadOrCreateSecret(config.dataDir, config.secret));
  const store = await openMetadataStore(openSqlite(config.dataDir));
  const localBlobs = new LocalBlobStore(config.dataDir);
  await localBlobs.init();
  const blobs: BlobStore = localBlobs;

  const accounts = new AccountsService({ store, secrets, ids, clock });
  const files = new FilesService({ store, blobs, ids, clock, maxFileSize: config.maxFileSize, log });
  const folders = new FoldersService({ store, ids, clock });
  const downloads = new DownloadsService({
    store,
    blobs,
    secrets,
    accounts,
    files,
    clock,
    directLinkTtlMs: config.directLinkTtlMs,
    directLinkRequiresKey: config.directLinkRequiresKey,
  });
  return { config, store, blobs, clock, accounts, files, folders, downloads, close: () => store.close() };
}
