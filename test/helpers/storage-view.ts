import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Kysely } from 'kysely';
import type { StagedInfo, StoredBlobInfo } from '../../src/blob/blob-store.js';
import { LocalBlobStore } from '../../src/blob/local-blob-store.js';
import type { Services } from '../../src/composition.js';
import { openDatabase } from '../../src/configured-stores.js';
import type { Database } from '../../src/db/database.js';

/*
 * What a test server stores, seen the same way on every storage setup (backend.ts): the
 * blob store through its own listing, the metadata through a connection of its own. Tests
 * assert through this instead of reading <data>/blobs, <data>/tmp or the SQLite file, so
 * one suite proves every setup. The few members that reach past the BlobStore interface
 * (makeUnreadable, failWrites) say how they do it on each store.
 */

/** One call of the blob store's stage() since the view opened, as it stands now. */
export interface StagingRecord {
  /** `running` until stage() settles. */
  state: 'running' | 'staged' | 'failed';
  /** Bytes staged, once `staged`. */
  size?: number;
}

/** An upload kept open in the blob store's staging: what a stalled or crashed client leaves. */
export interface HeldUpload {
  /** Its handle, as `staged()` lists it. */
  handle: string;
  /** Ends it (the upload fails and cleans up after itself); safe after gc took it. */
  release(): Promise<void>;
}

/** The counts and names a "nothing changed" check compares. */
export interface StorageSnapshot {
  /** Handles of staged uploads, sorted. */
  staged: string[];
  /** Stored blob keys, sorted. */
  blobKeys: string[];
  /** File rows, any state. */
  fileRows: number;
  /** Blob rows. */
  blobRows: number;
}

/** Rows as the driver returns them: numbers on SQLite, bigint columns as strings on PostgreSQL. */
export type RawRow<T extends keyof Database> = Record<keyof Database[T] & string, unknown>;

/** A test's window on a server's storage: blobs and staged uploads by the store's own listing, rows by SQL. */
export interface StorageView {
  /** Every stored blob (key, size, modification time), by key. */
  blobs(): Promise<StoredBlobInfo[]>;
  /** The keys of `blobs()`. */
  blobKeys(): Promise<string[]>;
  /** Every upload still being staged (temp file, unfinished multipart upload), by handle. */
  staged(): Promise<StagedInfo[]>;
  /** The handles of `staged()`. */
  stagedUploads(): Promise<string[]>;
  /** Stored keys that no blob row names: bytes a failed or refused upload must never leave. */
  unnamedBlobKeys(): Promise<string[]>;
  /** Staged uploads and unnamed keys together, labelled: [] once every upload has finished cleanly. */
  leftovers(): Promise<string[]>;
  /**
   * What the resumable upload store holds, by name: `<data>/uploads/*` locally; on S3 the
   * objects under `<prefix>uploads/` that are no blob and its unfinished multipart uploads
   * (`multipart <key>`).
   */
  resumable(): Promise<string[]>;
  /** The key the digest's blob row records, or null without a row. */
  keyOf(sha256: string): Promise<string | null>;
  /** Whether bytes are stored under a key. */
  hasBytes(key: string): Promise<boolean>;
  /** Deletes the digest's bytes and keeps its row: a lost blob. */
  removeBytes(sha256: string): Promise<void>;
  /**
   * Leaves the digest's bytes in place but unreadable (a broken disk, an operator's
   * mistake): a symlink loop in place of the file (ELOOP), or a bucket policy denying
   * GetObject on the object (403; close() takes the policy back).
   */
  makeUnreadable(sha256: string): Promise<void>;
  /**
   * Makes every new upload fail in the store (a plain file where the temp folder belongs,
   * or a bucket policy denying PutObject); the returned function restores it.
   */
  failWrites(): Promise<() => Promise<void>>;
  /**
   * Stores bytes through the blob store as a crash can leave them: published under the
   * key's lock, and with a blob row recorded at `recordedAt` only when that is given and
   * the digest has no row yet. Without a row the bytes are an orphan for gc.
   */
  putBlob(bytes: Buffer | string, options?: { recordedAt?: number }): Promise<{ sha256: string; key: string }>;
  /** A key the store could keep a digest's bytes under (the digest itself locally, a fresh id on S3), for rows planted without bytes. */
  newKey(sha256: string): string;
  /** Starts an upload in the blob store and leaves it open until released. */
  holdStagedUpload(): Promise<HeldUpload>;
  /** Every stage() call since the view opened, oldest first, updated as they settle. */
  stagings(): readonly StagingRecord[];
  /** Every row of a table. */
  rows<T extends keyof Database>(table: T): Promise<RawRow<T>[]>;
  /** How many rows of a table have these column values. */
  count<T extends keyof Database>(table: T, where?: Partial<Record<keyof Database[T] & string, string | number | null>>): Promise<number>;
  /** Staged uploads, blob keys, file and blob rows, for comparing before and after. */
  snapshot(): Promise<StorageSnapshot>;
  /** Restores what it broke and closes its connection; the server's storage stays. */
  close(): Promise<void>;
}

/** A view of a running server's storage, with a database connection of its own (closed by close()). */
export async function openStorageView(services: Services): Promise<StorageView> {
  const { config, store, blobs } = services;
  // Typed loosely inside: the members above give their callers the table types.
  const db = openDatabase(config).db as unknown as Kysely<Record<string, Record<string, unknown>>>;
  const bucketPolicy = config.s3Bucket === null ? null : await BucketPolicy.open(services);
  const local = blobs instanceof LocalBlobStore ? blobs : null;
  const undo: (() => Promise<void>)[] = [];

  const records: StagingRecord[] = [];
  const stage = blobs.stage.bind(blobs);
  blobs.stage = (source, options) => {
    const record: StagingRecord = { state: 'running' };
    records.push(record);
    const staging = stage(source, options);
    staging.then(
      (staged) => Object.assign(record, { state: 'staged', size: staged.size }),
      () => (record.state = 'failed'),
    );
    return staging;
  };

  const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
    const all: T[] = [];
    for await (const item of items) all.push(item);
    return all;
  };
  const namedKeys = async (): Promise<Set<string>> => {
    const rows = await db.selectFrom('blobs').select(['sha256', 'object_key']).execute();
    // As the repository reads them: rows older than migration 0006 name their digest.
    return new Set(rows.map((row) => (row.object_key ?? row.sha256) as string));
  };

  const view: StorageView = {
    async blobs() {
      return (await collect(blobs.listBlobs())).sort((a, b) => a.key.localeCompare(b.key));
    },
    async blobKeys() {
      return (await view.blobs()).map((blob) => blob.key);
    },
    async staged() {
      return (await collect(blobs.listStaged())).sort((a, b) => a.handle.localeCompare(b.handle));
    },
    async stagedUploads() {
      return (await view.staged()).map((staged) => staged.handle);
    },
    async unnamedBlobKeys() {
      const keys = await view.blobKeys();
      const named = await namedKeys();
      return keys.filter((key) => !named.has(key));
    },
    async leftovers() {
      const staged = (await view.stagedUploads()).map((handle) => `staged ${handle}`);
      return [...staged, ...(await view.unnamedBlobKeys()).map((key) => `unnamed ${key}`)];
    },
    async resumable() {
      if (local) {
        const names = await readdir(path.join(config.dataDir, 'uploads')).catch(() => [] as string[]);
        return names.sort();
      }
      // A finished upload's object is its blob (S3BlobStore.adoptResumable): those are not leftovers.
      const named = await namedKeys();
      return (await bucketPolicy!.resumableNames(`${config.s3Prefix}uploads/`)).filter((name) => !named.has(`uploads/${name}`));
    },
    async keyOf(sha256) {
      const row = await db.selectFrom('blobs').select(['sha256', 'object_key']).where('sha256', '=', sha256).executeTakeFirst();
      return row ? ((row.object_key ?? row.sha256) as string) : null;
    },
    hasBytes: (key) => blobs.has(key),
    async removeBytes(sha256) {
      const key = await view.keyOf(sha256);
      if (key === null) throw new Error(`no blob row for ${sha256}`);
      await blobs.delete(key);
    },
    async makeUnreadable(sha256) {
      const key = await view.keyOf(sha256);
      if (key === null) throw new Error(`no blob row for ${sha256}`);
      if (local) {
        const file = local.blobPath(key);
        await rm(file);
        await symlink(file, file);
        return;
      }
      // The key is a random id, so "*<key>" names this one object whatever the prefix.
      await bucketPolicy!.deny(`read-${key}`, 's3:GetObject', `*${key}`);
      // radosgw may go on answering reads from its cached bucket policy under load (seen in
      // full runs): the test goes on only once a read of the object is refused.
      await bucketPolicy!.untilReadRefused(key);
    },
    async failWrites() {
      if (local) {
        await rm(local.tempDir, { recursive: true, force: true });
        await writeFile(local.tempDir, 'a plain file where the temp folder belongs');
        let restored = false;
        const restore = async () => {
          if (restored) return;
          restored = true;
          await rm(local.tempDir, { force: true });
          await mkdir(local.tempDir, { recursive: true });
        };
        undo.push(restore);
        return restore;
      }
      // PutObject covers CreateMultipartUpload and UploadPart too.
      await bucketPolicy!.deny('writes', 's3:PutObject', '*');
      return () => bucketPolicy!.allow('writes');
    },
    async putBlob(bytes, options = {}) {
      const staged = await blobs.stage(Readable.from([Buffer.from(bytes)]), { maxBytes: Number.MAX_SAFE_INTEGER });
      const key = blobs.keyFor(staged);
      await store.transaction(async (repos) => {
        // The order of services/blob-lifecycle.ts: the digest's lock, then the key's.
        let record = options.recordedAt !== undefined;
        if (record) {
          await repos.locks.blob(staged.sha256);
          record = (await repos.blobs.keyOf(staged.sha256)) === null;
        }
        await repos.locks.blob(key);
        await blobs.publish(staged);
        if (record) await repos.blobs.insert(staged.sha256, staged.size, key, options.recordedAt!);
      });
      return { sha256: staged.sha256, key };
    },
    newKey(sha256) {
      return local ? sha256 : randomBytes(16).toString('hex');
    },
    async holdStagedUpload() {
      const before = new Set(await view.stagedUploads());
      const source = new PassThrough();
      const staging = blobs.stage(source, { maxBytes: Number.MAX_SAFE_INTEGER }).then(
        () => {},
        () => {},
      );
      // An S3 upload becomes a multipart upload (what listStaged shows) once a whole part
      // is in and more follows; a local one is a temp file from the first byte.
      source.write(Buffer.alloc(local ? 1024 : config.s3PartSize + 1, 'h'));
      const release = async () => {
        source.destroy(new Error('released by the test'));
        await staging;
      };
      // Returned once the store took every byte and its listing shows the upload with a
      // time that covers them (a multipart upload is listed before its part lands, a temp
      // file before its first write): the bytes were taken after `pending` last saw them.
      let pending = Date.now();
      for (let i = 0; i < 400; i++) {
        const tookAll = source.readableLength === 0 && source.writableLength === 0;
        if (!tookAll) pending = Date.now();
        const staged = (await view.staged()).find((s) => !before.has(s.handle));
        if (tookAll && staged && coversWrite(staged.modifiedAt, pending)) return { handle: staged.handle, release };
        await sleep(25);
      }
      await release();
      throw new Error('the held upload never showed in the staging listing with its bytes');
    },
    stagings: () => records,
    async rows(table) {
      return (await db
        .selectFrom(table as string)
        .selectAll()
        .execute()) as RawRow<typeof table>[];
    },
    async count(table, where = {}) {
      let query = db.selectFrom(table as string).select(db.fn.countAll().as('n'));
      for (const [column, value] of Object.entries(where)) query = query.where(column, value === null ? 'is' : '=', value);
      return Number((await query.executeTakeFirstOrThrow()).n);
    },
    async snapshot() {
      return {
        staged: await view.stagedUploads(),
        blobKeys: await view.blobKeys(),
        fileRows: await view.count('files'),
        blobRows: await view.count('blobs'),
      };
    },
    async close() {
      blobs.stage = stage;
      for (const restore of undo.splice(0).reverse()) await restore().catch(() => {});
      await bucketPolicy?.close();
      await db.destroy();
    },
  };
  return view;
}

/** The bucket policy of a test bucket: Deny statements the view adds and takes back. */
class BucketPolicy {
  private readonly statements = new Map<string, object>();

  private constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly commands: typeof import('@aws-sdk/client-s3'),
  ) {}

  static async open(services: Services): Promise<BucketPolicy> {
    const { config } = services;
    // Loaded only for S3, like the store itself (composition.ts).
    const sdk = await import('@aws-sdk/client-s3');
    // Bundled for the run (scripts/test-tree.js), a CommonJS package loaded by import() has
    // its exports under `default` only; unbundled (tsx), Node gives them by name too.
    const commands = 'ListObjectsV2Command' in sdk ? sdk : (sdk as unknown as { default: typeof sdk }).default;
    const { createS3Client } = await import('../../src/blob/s3-blob-store.js');
    const client = createS3Client({
      endpoint: config.s3Endpoint ?? undefined,
      region: config.s3Region,
      forcePathStyle: config.s3ForcePathStyle,
      checksums: 'when_required',
    });
    return new BucketPolicy(client, config.s3Bucket!, commands);
  }

  /** Denies `action` on the objects matching `pattern` (an ARN tail, `*` allowed) to everyone, the owner included. */
  async deny(name: string, action: string, pattern: string): Promise<void> {
    this.statements.set(name, {
      Sid: name.replace(/[^A-Za-z0-9]/g, ''),
      Effect: 'Deny',
      Principal: '*',
      Action: [action],
      Resource: [`arn:aws:s3:::${this.bucket}/${pattern}`],
    });
    await this.apply();
  }

  /** Waits (bounded) until reading the object whose key ends with `tail` is refused. */
  async untilReadRefused(tail: string): Promise<void> {
    const listed = await this.client.send(new this.commands.ListObjectsV2Command({ Bucket: this.bucket }));
    const key = (listed.Contents ?? []).find((object) => object.Key?.endsWith(tail))?.Key;
    if (key === undefined) return;
    for (let attempt = 1; attempt <= 200; attempt++) {
      try {
        const object = await this.client.send(new this.commands.GetObjectCommand({ Bucket: this.bucket, Key: key }));
        await object.Body?.transformToByteArray();
      } catch {
        return;
      }
      // Under load radosgw once kept answering from its old policy for over 5 s (CI, a full
      // run): writing the policy again each second refreshes its cached copy.
      if (attempt % 10 === 0) await this.apply();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`reading ${key} is still allowed 20 s after the bucket policy denied it`);
  }

  /** Objects and unfinished multipart uploads under a folder, by name. */
  async resumableNames(folder: string): Promise<string[]> {
    const objects = await this.client.send(new this.commands.ListObjectsV2Command({ Bucket: this.bucket, Prefix: folder }));
    const uploads = await this.client.send(new this.commands.ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: folder }));
    return [
      ...(objects.Contents ?? []).map((object) => object.Key!.slice(folder.length)),
      ...(uploads.Uploads ?? []).map((upload) => `multipart ${upload.Key!.slice(folder.length)}`),
    ].sort();
  }

  /** Takes a denial back. */
  async allow(name: string): Promise<void> {
    this.statements.delete(name);
    await this.apply();
  }

  async close(): Promise<void> {
    if (this.statements.size > 0) {
      this.statements.clear();
      await this.apply().catch(() => {});
    }
    this.client.destroy();
  }

  private async apply(): Promise<void> {
    const { PutBucketPolicyCommand, DeleteBucketPolicyCommand } = this.commands;
    if (this.statements.size === 0) {
      await this.client.send(new DeleteBucketPolicyCommand({ Bucket: this.bucket }));
      return;
    }
    const policy = { Version: '2012-10-17', Statement: [...this.statements.values()] };
    await this.client.send(new PutBucketPolicyCommand({ Bucket: this.bucket, Policy: JSON.stringify(policy) }));
  }
}

/**
 * Whether a listed modification time is from a write at or after `at` (epoch ms): file
 * systems stamp with a clock a few ms coarser than Date.now(), S3 may keep whole seconds.
 */
function coversWrite(modifiedAt: number, at: number): boolean {
  if (modifiedAt % 1000 === 0) return modifiedAt >= Math.floor(at / 1000) * 1000;
  return modifiedAt >= at - 20;
}
