import type { BlobStore } from './blob/blob-store.js';
import { BlobStoreUnavailableError } from './blob/blob-store.js';
import { LocalBlobStore } from './blob/local-blob-store.js';
import { LocalResumableStorage } from './blob/local-resumable-storage.js';
import { LocalThumbnailStore } from './blob/local-thumbnail-store.js';
import type { ResumableStorage } from './blob/resumable-storage.js';
import type { S3ClientOptions } from './blob/s3-blob-store.js';
import type { ThumbnailStore } from './blob/thumbnail-store.js';
import { type Config, ConfigError } from './config/config.js';
import { redactUrl } from './config/redact-url.js';

export { redactUrl };

import { type OpenedDatabase, openPostgres, openSqlite } from './db/dialect.js';
import { openMetadataStore } from './db/metadata-store.js';
import type { MetadataStore } from './db/repositories/repositories.js';

/*
 * The one place that picks the storage backends from the configuration, for the wiring
 * root (composition.ts), the CLI's migrate and the tests. Everything else takes a
 * MetadataStore and a BlobStore and never asks which ones.
 */

/** The metadata database the configuration names: PostgreSQL with --database-url, else SQLite in the data folder. */
export function openDatabase(config: Config): OpenedDatabase {
  if (config.databaseUrl === null) return openSqlite(config.dataDir);
  return openPostgres({ url: config.databaseUrl, schema: config.databaseSchema, poolSize: config.databasePoolSize, poolWaitMs: config.databasePoolWaitMs });
}

/**
 * Opens and migrates the metadata store. A database that cannot be reached or used is a
 * ConfigError of one line naming the setting, never a stack trace.
 */
export async function openConfiguredMetadataStore(config: Config, report?: (error: unknown, message: string) => void): Promise<MetadataStore> {
  try {
    return await openMetadataStore(openDatabase(config), { report });
  } catch (error) {
    if (config.databaseUrl === null) throw error;
    throw new ConfigError(`cannot use PostgreSQL at ${redactUrl(config.databaseUrl)} (--database-url, FILEHAVEN_DATABASE_URL): ${rootCause(error)}`);
  }
}

/** The blob store the configuration names: S3 with --s3-bucket, else the data folder; checked before use. */
export async function openConfiguredBlobStore(config: Config): Promise<BlobStore> {
  const blobs = await configuredBlobStore(config);
  try {
    await blobs.init();
  } catch (error) {
    if (error instanceof BlobStoreUnavailableError) throw new ConfigError(error.message);
    throw error;
  }
  return blobs;
}

async function configuredBlobStore(config: Config): Promise<BlobStore> {
  if (config.s3Bucket === null) return new LocalBlobStore(config.dataDir);
  // The SDK warns on every start under Node < 22 that its releases after January 2027 will
  // need Node 22; the lockfile pins a release that supports Node 20 (docs/configuration.md: S3), so the
  // warning is said once there rather than in every operator's log.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // Loaded only when used: the AWS SDK is large, and a site on its data folder never needs it.
  const { createS3Client, S3BlobStore } = await import('./blob/s3-blob-store.js');
  const client = createS3Client(s3ClientOptions(config));
  return new S3BlobStore({ bucket: config.s3Bucket, prefix: config.s3Prefix, client, partSize: config.s3PartSize, queueSize: config.s3QueueSize });
}

/** The S3 client settings the configuration names, the checksum choice made here only (docs/configuration.md: S3). */
function s3ClientOptions(config: Config): S3ClientOptions {
  const checksums = config.s3Checksums === 'auto' ? (config.s3Endpoint ? 'when_required' : 'when_supported') : config.s3Checksums;
  return { endpoint: config.s3Endpoint ?? undefined, region: config.s3Region, forcePathStyle: config.s3ForcePathStyle, checksums };
}

/**
 * Where resumable uploads keep their bytes, beside the blob store they become blobs of:
 * `<data>/uploads` for the data folder, `<prefix>uploads/` in the bucket for S3.
 */
export async function openResumableStorage(config: Config, blobs: BlobStore): Promise<ResumableStorage> {
  if (blobs instanceof LocalBlobStore) return new LocalResumableStorage(config.dataDir, blobs, config.uploadExpiryMs);
  const { S3BlobStore, s3ClientConfig } = await import('./blob/s3-blob-store.js');
  const { S3ResumableStorage } = await import('./blob/s3-resumable-storage.js');
  if (!(blobs instanceof S3BlobStore)) throw new Error('resumable uploads need the local or the S3 blob store');
  // Its own client from the blob store's settings: it adds a middleware of its own (the
  // key prefix tus's store does not know), which must not touch the shared client.
  return new S3ResumableStorage(
    {
      bucket: blobs.location.bucket,
      prefix: blobs.location.prefix,
      client: s3ClientConfig(s3ClientOptions(config)),
      partSize: config.s3PartSize,
      queueSize: config.s3QueueSize,
      expiryMs: config.uploadExpiryMs,
    },
    blobs,
  );
}

/**
 * Where thumbnails are kept, beside the blobs they are made from: `<data>/thumbs` for the
 * data folder, `<prefix>thumbs/` in the bucket for S3 (docs/web.md "Thumbnails").
 */
export async function openThumbnailStore(config: Config, blobs: BlobStore): Promise<ThumbnailStore> {
  if (blobs instanceof LocalBlobStore) return new LocalThumbnailStore(config.dataDir);
  const { S3BlobStore } = await import('./blob/s3-blob-store.js');
  const { S3ThumbnailStore } = await import('./blob/s3-thumbnail-store.js');
  if (!(blobs instanceof S3BlobStore)) throw new Error('thumbnails need the local or the S3 blob store');
  // The blob store's own client, bucket and prefix: one client per process.
  return new S3ThumbnailStore(blobs.location);
}

/** The innermost readable reason of a driver error (pg wraps a refused connection in an AggregateError without a message). */
export function rootCause(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const e = current as { message?: string; code?: string; errors?: unknown[]; cause?: unknown };
    if (Array.isArray(e.errors) && e.errors.length > 0) {
      current = e.errors[0];
      continue;
    }
    if (e.cause) {
      current = e.cause;
      continue;
    }
    const message = (e.message ?? '').replace(/^database migration\s*\S*\s*failed:\s*/, '').trim();
    return message || e.code || String(current);
  }
  return String(error);
}
