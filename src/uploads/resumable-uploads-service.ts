import { randomBytes } from 'node:crypto';
import { pipeline, type Readable, Transform } from 'node:stream';
import type { ResumableStorage } from '../blob/resumable-storage.js';
import { DatabaseBusyError } from '../db/dialect.js';
import type { MetadataStore, ResumableUploadRecord } from '../db/repositories/repositories.js';
import { ApiError, errors, isRefusal } from '../domain/errors.js';
import type { Clock } from '../domain/ids.js';
import type { Account } from '../domain/types.js';
import { settleDetached } from '../limits/upload-quota.js';
import {
  bestCheckpoint,
  type DigestCheckpoint,
  LiveDigests,
  NativeDigest,
  parseCheckpoints,
  ResumableDigest,
  type RunningDigest,
  withCheckpoint,
} from '../resumable/upload-digest.js';
import type { UploadLocker } from '../resumable/upload-locker.js';
import type { FilesService } from '../services/files-service.js';
import type { CreatedFile } from '../services/new-file-row.js';
import { type RequestSlots, settleSlot } from '../sharing/request-slots.js';
import { concatenatedBytes, concatenatedPartial, finalConcat, finalOfPartial, isPartial, PARTIAL, partsOfFinal } from './upload-concat.js';
import type { UploadsService } from './uploads-service.js';

/**
 * The server name of a resumable upload's volume reservation: no server is named so
 * (--server-name allows no space), so no server's start settles it; it lasts until the
 * upload is stored, ended or expired.
 */
export const RESUMABLE_RESERVATION_SERVER = 'resumable upload';

/** The most partial uploads one final may name (each is locked and read while it is made). */
export const MAX_CONCAT_PARTS = 64;

/** Expired uploads removed per gc query. */
const EXPIRY_BATCH = 100;

export interface ResumableUploadsDeps {
  store: MetadataStore;
  storage: ResumableStorage;
  /** An upload that became a file answers that file again. */
  files: Pick<FilesService, 'visible'>;
  /** The upload use case: the volume reserved at creation and checked before each write, and the file made at the finish. */
  uploads: Pick<UploadsService, 'reserveAhead' | 'recheck' | 'upload' | 'expiresIn' | 'admissible' | 'stageReserved'>;
  locker: UploadLocker;
  clock: Clock;
  /** How long an upload may take from its creation (--upload-expiry). */
  expiryMs: number;
  log: (error: unknown, message: string) => void;
  /** Bytes read again to finish a digest (after a crash mid-request), counted for /metrics. */
  digestReread?: (bytes: number) => void;
  /** The slots of uploads into upload requests (issue 25): one is taken at a creation into a request. */
  requestSlots: Pick<RequestSlots, 'reserve' | 'release'>;
}

/** What a new upload declares (Upload-Length and Upload-Metadata). */
export interface NewUpload {
  length: number;
  filename: string | undefined;
  folderId: string | undefined;
  /** The metadata's `expires_in` (seconds), checked now and applied when the upload is stored. */
  expiresIn?: string | undefined;
  /**
   * An upload into this upload request (its link already opened by the caller): it takes a
   * slot of the request for its whole length, until it expires; `folderId` is then the
   * request's, never the client's.
   */
  requestId?: string;
  /**
   * A partial upload of tus's concatenation (Upload-Concat: partial): its length is
   * reserved, its bytes are written and resumed as any upload's, but it becomes no file;
   * a final upload (`concatenate`) names it. It needs no file name, folder or expiry.
   */
  partial?: boolean;
}

/** What a final upload (Upload-Concat: final;...) declares besides its partials: the file's name, folder and expiry. */
export interface NewFinalUpload {
  filename: string | undefined;
  folderId: string | undefined;
  expiresIn?: string | undefined;
}

/** A finished upload: its file, and the delete secret when this call stored it (it is shown once). */
export interface FinishedUpload {
  file: CreatedFile['file'];
  deleteSecret: string | null;
}

/**
 * Resumable (tus) uploads, shared by the API and the site (http/tus/) and gc: an upload
 * is created with its whole length reserved against the owner's upload volume
 * (UploadsService.reserveAhead), written PATCH by PATCH while its SHA-256 advances with it
 * (upload-digest.ts), and when its last byte is stored it becomes a file through the one
 * upload use case (UploadsService.upload), as a POST /files upload does: same ids, dedup,
 * blacklist, upload log, folder, metrics and links.
 */
export class ResumableUploadsService {
  /** This process's digests of uploads between their requests. */
  private readonly live = new LiveDigests();

  constructor(private readonly deps: ResumableUploadsDeps) {}

  /** A new upload id: 128 random bits, never anything from a request. */
  newId(): string {
    return randomBytes(16).toString('hex');
  }

  /**
   * Checks what the client declares and records the upload with its volume reservation,
   * before tus creates its storage: errorEmptyFile, errorFileSize, errorFolderNotFound,
   * errorFileInBlackList (by name), errorUploadLimit, errorWrongParameters for a bad
   * `expires_in`, or errorUploadFaild for a missing file name.
   */
  async create(owner: Account, id: string, input: NewUpload): Promise<{ expiresAt: number }> {
    const { length, partial = false } = input;
    // A partial's name, folder and expiry come with its final; what its metadata says is not kept.
    const filename = partial ? '' : input.filename;
    const folderId = partial ? undefined : input.folderId;
    if (partial && input.requestId !== undefined)
      throw errors.uploadMalformed('parallel uploads (Upload-Concat) into an upload request are not supported; send the file as one upload');
    if (filename === undefined || (!partial && filename.trim() === ''))
      throw errors.uploadMalformed('Upload-Metadata must carry the file name (key "filename")');
    // Checked before anything is reserved; the file's expiry counts from when it is stored.
    const asked = this.deps.uploads.expiresIn(partial ? undefined : input.expiresIn);
    const expiresIn = asked.kind === 'in' ? asked.seconds : null;
    const now = this.deps.clock();
    const expiresAt = now + this.deps.expiryMs;
    // The request's slot first, in a transaction of its own: the file's transaction takes
    // the request's lock before the owner's volume lock, so this must not hold them the
    // other way round.
    const slot =
      input.requestId === undefined
        ? null
        : await this.deps.requestSlots.reserve(input.requestId, { declaredBytes: length, exact: true }, { until: expiresAt, uploadId: id });
    try {
      await this.deps.uploads.reserveAhead(
        owner,
        { length, name: partial ? null : filename, folderId: folderId ?? null },
        { server: RESUMABLE_RESERVATION_SERVER, instance: id, until: expiresAt },
        (repos, reservationId) =>
          repos.resumableUploads.create({
            id,
            accountId: owner.id,
            filename,
            folderId: folderId ?? null,
            length,
            reservationId,
            createdAt: now,
            expiresAt,
            expiresIn,
            concat: partial ? PARTIAL : null,
          }),
      );
    } catch (error) {
      if (slot) await this.deps.requestSlots.release(slot.id);
      throw error;
    }
    return { expiresAt };
  }

  /** The caller's upload: errorFileNotFound when there is none (or it expired), errorPermissionDenied when it is another account's. */
  async owned(caller: Account, id: string): Promise<ResumableUploadRecord> {
    const record = await this.deps.store.resumableUploads.byId(id);
    if (!record || (record.fileId === null && record.expiresAt <= this.deps.clock())) throw errors.uploadNotFound();
    if (record.accountId !== caller.id) throw errors.permissionDenied('The upload belongs to another account');
    return record;
  }

  /**
   * Before more bytes arrive: the limits again (API.md 8), as they may have changed since
   * the upload began: the largest file, and the account's upload volume.
   */
  beforeWrite(caller: Account, record: ResumableUploadRecord): Promise<void> {
    return this.deps.uploads.recheck(caller, record.length);
  }

  /**
   * Writes a request's bytes at `offset` through `write` (the tus store) while the digest
   * follows them. The upload's last request in this process left its digest here at
   * `offset` (or the upload begins now): node:crypto's hash goes on, and nothing is saved,
   * since the next request most likely lands here too. Otherwise (a crash, another server)
   * the saved state at `offset` goes on (or one before it, caught up by reading what is
   * stored), and its state is saved at every multiple of the storage's checkpoint step
   * and at the end. Where the digest cannot be had at all (an S3 upload with no saved
   * state at its offset), the bytes are written unhashed and `finish` reads from the last
   * saved state on.
   */
  async write(id: string, source: Readable, offset: number, write: (source: Readable) => Promise<number>): Promise<number> {
    const record = await this.deps.store.resumableUploads.byId(id);
    // A partial's bytes are hashed once, in order, when its final puts them together.
    if (!record || record.fileId !== null || isPartial(record)) return write(source);
    const checkpoints = { list: parseCheckpoints(record.digestCheckpoints) };
    // States past the offset the store holds describe bytes it lost (a failed write, a
    // crash with parts in flight) and that this write replaces: they go first, persisted,
    // or `finish` could take one of them for bytes that differ.
    const valid = checkpoints.list.filter((item) => item.at <= offset);
    if (valid.length !== checkpoints.list.length) {
      checkpoints.list = valid;
      await this.deps.store.resumableUploads.saveCheckpoints(id, JSON.stringify(valid));
    }
    const digest: RunningDigest | null = this.live.take(id, offset) ?? (offset === 0 ? new NativeDigest() : await this.digestAt(id, checkpoints, offset));
    if (!digest) return write(source);
    let saving: Promise<void> = Promise.resolve();
    const save = (checkpoint: DigestCheckpoint) => {
      saving = saving.then(() => this.saveCheckpoint(id, checkpoints, checkpoint));
    };
    const step = this.deps.storage.checkpointStep(record.length);
    let next = (Math.floor(offset / step) + 1) * step;
    const saved = digest instanceof ResumableDigest ? digest : null;
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        // The state is taken exactly at each multiple of the step, where a resume can find it.
        let rest = chunk;
        while (saved && saved.offset + rest.length >= next) {
          const head = next - saved.offset;
          saved.update(rest.subarray(0, head));
          save(saved.checkpoint());
          rest = rest.subarray(head);
          next += step;
        }
        digest.update(rest);
        done(null, chunk);
      },
    });
    // Errors travel both ways: a failing source fails the store's read, and a store that
    // gives up destroys the source.
    pipeline(source, hashing, () => {});
    let stored: number;
    try {
      stored = await write(hashing);
    } finally {
      await saving;
    }
    // The store took exactly the bytes hashed: the digest goes on from its new offset (and
    // a saved state is saved there). Else it is dropped: the saved states stay, and the
    // next write or finish goes on from one of them.
    if (stored === digest.offset) {
      if (saved) await this.saveCheckpoint(id, checkpoints, saved.checkpoint());
      this.live.put(id, digest);
    }
    return stored;
  }

  /** Saves a digest state once the bytes it covers are durable; a failure only costs a longer read later. */
  private async saveCheckpoint(id: string, checkpoints: { list: DigestCheckpoint[] }, checkpoint: DigestCheckpoint): Promise<void> {
    try {
      await this.deps.storage.sync(id);
      checkpoints.list = withCheckpoint(checkpoints.list, checkpoint);
      await this.deps.store.resumableUploads.saveCheckpoints(id, JSON.stringify(checkpoints.list));
    } catch (error) {
      this.deps.log(error, 'saving an upload digest checkpoint failed');
    }
  }

  /**
   * Makes a finished upload a file of its owner, once: under the upload's lock, so a
   * PATCH's finish and a HEAD's (after a crash between the last byte and the file) never
   * run together. A finished upload that was already stored answers its file again (no
   * delete secret then). A refused file (empty, blacklisted digest, a storage failure)
   * removes the upload, bytes and all, and its reservation. A partial upload whose bytes
   * are all stored becomes no file: null (it waits for its final, `concatenate`).
   */
  async finish(owner: Account, id: string): Promise<FinishedUpload | null> {
    const lock = this.deps.locker.newLock(id);
    await lock.lock(new AbortController().signal, async () => {});
    try {
      const record = await this.owned(owner, id);
      if (record.fileId !== null) return { file: await this.deps.files.visible(record.fileId), deleteSecret: null };
      if (isPartial(record)) return null;
      const created = await this.storeFinished(owner, record);
      await this.deps.storage.forgetFinished(id).catch((error: unknown) => this.deps.log(error, 'removing the records of a stored upload failed'));
      return { file: created.file, deleteSecret: created.deleteSecret };
    } finally {
      await lock.unlock().catch((error: unknown) => this.deps.log(error, 'releasing an upload lock failed'));
    }
  }

  /** The file a stored upload became (a concatenated partial: its final's), answered again: no delete secret. */
  async storedFile(record: ResumableUploadRecord & { fileId: string }): Promise<FinishedUpload> {
    return { file: await this.deps.files.visible(record.fileId), deleteSecret: null };
  }

  /**
   * tus's concatenation: makes the partial uploads `partIds` (the owner's, finished, each
   * named once) one file of `owner`, their bytes in that order, recorded as the final
   * upload `finalId`. Under the partials' locks (no PATCH, gc or second final meanwhile),
   * their bytes stream through one SHA-256 pass into the blob store's staging (its own
   * atomic way: a temporary file, an S3 multipart upload), then the file is made by the
   * one upload use case as a finished upload's is. The partials' reservations are what
   * the file's volume takes: in the file's transaction one becomes its upload log row and
   * the others end, so the volume is never counted twice nor left reserved. The partials
   * are marked stored with the file (a retried final answers the same file) and their
   * bytes go.
   *
   * Refusals: errorFileNotFound (a partial unknown or expired), errorPermissionDenied
   * (another account's), errorUploadFaild 400 (a partial named twice, not a partial, not
   * finished: concatenation-unfinished is not offered), 409 (already part of another
   * file), errorFileSize, errorUploadLimit, and the checks of a new file (name, folder,
   * expiry, blacklist). Before any byte is read a refusal keeps the partials for a better
   * final; a refusal of the bytes themselves (a blacklisted digest) removes them.
   */
  async concatenate(owner: Account, finalId: string, partIds: readonly string[], input: NewFinalUpload): Promise<FinishedUpload & { finalId: string }> {
    const { filename, folderId } = input;
    if (partIds.length === 0) throw errors.uploadMalformed('Upload-Concat: final names no partial upload');
    if (partIds.length > MAX_CONCAT_PARTS) throw errors.uploadMalformed(`Upload-Concat: final names more than ${MAX_CONCAT_PARTS} partial uploads`);
    const named = new Set<string>();
    for (const id of partIds) {
      if (named.has(id)) throw errors.uploadMalformed(`Upload-Concat: final names the partial upload ${id} twice`);
      named.add(id);
    }
    if (filename === undefined || filename.trim() === '') throw errors.uploadMalformed('Upload-Metadata must carry the file name (key "filename")');
    const asked = this.deps.uploads.expiresIn(input.expiresIn);
    // In one order for every final, so two that share partials never hold each other's locks.
    const locks = [...named].sort().map((id) => this.deps.locker.newLock(id));
    const held: typeof locks = [];
    try {
      for (const lock of locks) {
        await lock.lock(new AbortController().signal, async () => {});
        held.push(lock);
      }
      const parts = await Promise.all(partIds.map((id) => this.partOf(owner, id)));
      const stored = new Set(parts.map((part) => part.fileId));
      if (!stored.has(null)) {
        // These very partials already made a final: it was made, its answer was lost.
        const finals = new Set(parts.map(finalOfPartial));
        const made = finals.size === 1 ? [...finals][0] : null;
        const madeRow = made ? await this.deps.store.resumableUploads.byId(made) : null;
        if (madeRow && madeRow.fileId !== null && partsOfFinal(madeRow)?.join(' ') === partIds.join(' '))
          return { ...(await this.storedFile({ ...madeRow, fileId: madeRow.fileId })), finalId: madeRow.id };
        throw new ApiError('errorUploadFaild', 409, 'Upload failed: these partial uploads already became part of another file');
      }
      if (stored.size > 1) throw new ApiError('errorUploadFaild', 409, 'Upload failed: some of these partial uploads already became a file');
      const length = parts.reduce((sum, part) => sum + part.length, 0);
      await this.deps.uploads.admissible(owner, { length, name: filename, folderId: folderId ?? null });
      for (const part of parts) {
        const { offset } = await this.deps.storage.dataStore.getUpload(part.id);
        if (offset !== part.length)
          throw errors.uploadMalformed(
            `the partial upload ${part.id} is not finished (${offset} of ${part.length} bytes); send the final once every partial is`,
          );
      }
      await this.deps.uploads.recheck(owner, length);
      const expiresIn = asked.kind === 'in' ? asked.seconds : null;
      return { ...(await this.storeConcatenated(owner, finalId, parts, { filename, folderId: folderId ?? null, expiresIn })), finalId };
    } finally {
      for (const lock of held) await lock.unlock().catch((error: unknown) => this.deps.log(error, 'releasing an upload lock failed'));
    }
  }

  /** A partial upload a final names: the owner's, a partial, not expired. */
  private async partOf(owner: Account, id: string): Promise<ResumableUploadRecord> {
    const record = await this.deps.store.resumableUploads.byId(id);
    if (!record || (record.fileId === null && record.expiresAt <= this.deps.clock()))
      throw new ApiError('errorFileNotFound', 404, `Partial upload ${id} does not exist or has expired`);
    if (record.accountId !== owner.id) throw errors.permissionDenied(`The partial upload ${id} belongs to another account`);
    if (!isPartial(record)) throw errors.uploadMalformed(`the upload ${id} is not a partial upload (created with Upload-Concat: partial)`);
    return record;
  }

  /** The partials' bytes staged in order, then the file (see `concatenate`); the partials' bytes go once it is made. */
  private async storeConcatenated(
    owner: Account,
    finalId: string,
    parts: readonly ResumableUploadRecord[],
    final: { filename: string; folderId: string | null; expiresIn: number | null },
  ): Promise<FinishedUpload> {
    const length = parts.reduce((sum, part) => sum + part.length, 0);
    // S3: a server may have died between a partial's last part and its completion.
    for (const part of parts) await this.deps.storage.complete(part.id, part.length);
    const staged = await this.deps.uploads.stageReserved(concatenatedBytes(this.deps.storage, parts));
    const reservations = parts.map((part) => part.reservationId).filter((id): id is number => id !== null);
    const now = this.deps.clock();
    let created: CreatedFile;
    try {
      created = await this.deps.uploads.upload({
        owner,
        folder: final.folderId === null ? null : { id: final.folderId, ifGone: 'refuse' },
        // The first reservation becomes the file's upload log row (of the whole length); the others end with it.
        source: { kind: 'staged', staged, name: final.filename, reservationId: reservations[0] ?? null, startedAt: parts[0]!.createdAt, keepOnFailure: false },
        expiresIn: final.expiresIn === null ? undefined : { kind: 'in', seconds: final.expiresIn },
        within: async (repos, file) => {
          if (staged.size !== length) throw new Error(`the partial uploads staged ${staged.size} bytes, not ${length}`);
          await repos.locks.uploadVolume(owner.id);
          for (const reservationId of reservations.slice(1)) await settleDetached(repos, reservationId, null);
          for (const part of parts) {
            if (!(await repos.resumableUploads.markStored(part.id, file.id, concatenatedPartial(finalId))))
              throw new Error(`partial upload ${part.id} was stored or removed meanwhile`);
          }
          await repos.resumableUploads.create({
            id: finalId,
            accountId: owner.id,
            filename: final.filename,
            folderId: final.folderId,
            length,
            reservationId: null,
            createdAt: now,
            expiresAt: now + this.deps.expiryMs,
            expiresIn: final.expiresIn,
            concat: finalConcat(parts.map((part) => part.id)),
          });
          if (!(await repos.resumableUploads.markStored(finalId, file.id))) throw new Error(`final upload ${finalId} exists already`);
        },
      });
    } catch (error) {
      // The bytes themselves refused (a blacklisted digest): no final of these partials can pass.
      if (isRefusal(error) && error.code === 'errorFileInBlackList')
        for (const part of parts) await this.terminate(part.id).catch(this.logAs('removing a refused partial upload failed'));
      throw error;
    }
    for (const part of parts) {
      this.live.drop(part.id);
      await this.deps.storage.remove(part.id).catch(this.logAs(`removing the concatenated partial upload ${part.id} failed; gc removes it at its expiry`));
    }
    return { file: created.file, deleteSecret: created.deleteSecret };
  }

  private logAs(message: string): (error: unknown) => void {
    return (error) => this.deps.log(error, message);
  }

  /** Ends an upload (DELETE, tus termination): its bytes, row and reservation; a stored upload's file stays. */
  async terminate(id: string): Promise<void> {
    const record = await this.deps.store.resumableUploads.byId(id);
    // A partial a final joined: its bytes are a copy (the removal after the join may not
    // have happened, a crash): they go too, or nothing would find them again.
    if (record && (record.fileId === null || finalOfPartial(record) !== null)) await this.deps.storage.remove(id);
    await this.forget(id);
  }

  /**
   * gc: removes uploads past their expiry with their bytes (stored ones only lose their
   * row); an upload a request is writing right now is left for the next run. Returns how
   * many were removed.
   */
  async expire(): Promise<number> {
    let removed = 0;
    const skipped = new Set<string>();
    for (;;) {
      const rows = (await this.deps.store.resumableUploads.expired(this.deps.clock(), EXPIRY_BATCH + skipped.size)).filter((row) => !skipped.has(row.id));
      if (rows.length === 0) return removed;
      for (const row of rows) {
        const now = this.deps.clock();
        if (!(await this.deps.store.uploadLocks.take(row.id, 'gc', now + 60_000, now))) {
          skipped.add(row.id);
          continue;
        }
        try {
          // Read again under the lock: a finish may have stored it since the list was read.
          const current = await this.deps.store.resumableUploads.byId(row.id);
          if (!current || current.expiresAt >= this.deps.clock()) {
            skipped.add(row.id);
            continue;
          }
          // A stored upload's file stays; only what tus kept of it (if a forget failed) goes.
          // A partial a final joined had its bytes copied into the final's blob: none of them
          // is a blob. (A partial an older server made a file of, as a plain upload, owns its
          // blob like any stored upload: kept.)
          if (current.fileId === null || finalOfPartial(current) !== null) await this.deps.storage.remove(row.id);
          else await this.deps.storage.forgetFinished(row.id);
          await this.forget(row.id);
          removed++;
        } catch (error) {
          this.deps.log(error, `removing the expired upload ${row.id} failed; the next gc tries again`);
          skipped.add(row.id);
        } finally {
          await this.deps.store.uploadLocks.release(row.id, 'gc').catch(() => {});
        }
      }
    }
  }

  /**
   * The upload request a resumable upload goes into, for as long as its row lives (a
   * stored one too: a retried last PATCH or a HEAD answers its file); null for an upload
   * of the account itself.
   */
  async requestOf(id: string): Promise<string | null> {
    return this.deps.store.uploadRequests.requestOfUpload(id);
  }

  /** The upload's row when it has become a file; null otherwise. */
  async storedUpload(id: string): Promise<ResumableUploadRecord | null> {
    const record = await this.deps.store.resumableUploads.byId(id);
    return record && record.fileId !== null ? record : null;
  }

  /**
   * Whether a blob key is the bytes of a resumable upload that has not become a file yet
   * (S3: the finished object before its file row): gc must leave those alone.
   */
  async holdsKey(key: string): Promise<boolean> {
    const id = this.deps.storage.uploadIdOfKey(key);
    if (id === null) return false;
    const record = await this.deps.store.resumableUploads.byId(id);
    return record !== null && record.fileId === null;
  }

  /** The digest state at `offset`: saved, or caught up from a saved one by reading stored bytes (and saved); null when neither can be had. */
  private async digestAt(id: string, checkpoints: { list: DigestCheckpoint[] }, offset: number): Promise<ResumableDigest | null> {
    if (offset === 0) return ResumableDigest.fresh();
    const best = bestCheckpoint(checkpoints.list, offset);
    const resumed = best ? await ResumableDigest.resume(best) : null;
    if (resumed && resumed.offset === offset) return resumed;
    const from = resumed ? resumed.offset : 0;
    const reader = await this.deps.storage.readUnfinished(id, from, offset);
    if (!reader) return null;
    const digest = resumed ?? (await ResumableDigest.fresh());
    for await (const chunk of reader) digest.update(chunk as Buffer);
    this.deps.digestReread?.(offset - from);
    if (digest.offset !== offset) return null;
    // Saved at once: another crash before the next checkpoint does not read this again.
    await this.saveCheckpoint(id, checkpoints, digest.checkpoint());
    return digest;
  }

  /**
   * The finished upload's SHA-256: the digest its last write left in this process, else
   * from its last checkpoint, reading only what came after it.
   */
  private async finalDigest(record: ResumableUploadRecord): Promise<string> {
    const live = this.live.take(record.id, record.length);
    if (live) return live.hex();
    const best = bestCheckpoint(parseCheckpoints(record.digestCheckpoints), record.length);
    // Nothing is saved past the end: without a saved state, the faster hash reads it all.
    const digest: RunningDigest = (best ? await ResumableDigest.resume(best) : null) ?? new NativeDigest();
    if (digest.offset < record.length) {
      const from = digest.offset;
      for await (const chunk of await this.deps.storage.readFinished(record.id, from, record.length)) digest.update(chunk as Buffer);
      this.deps.digestReread?.(record.length - from);
    }
    if (digest.offset !== record.length) throw new Error(`upload ${record.id} holds ${digest.offset} bytes, not ${record.length}`);
    return digest.hex();
  }

  private async storeFinished(owner: Account, record: ResumableUploadRecord): Promise<CreatedFile> {
    const upload = await this.deps.storage.dataStore.getUpload(record.id);
    if (upload.offset !== record.length) throw errors.uploadMalformed(`the upload is not finished: ${upload.offset} of ${record.length} bytes`);
    let created: CreatedFile;
    try {
      // Every byte is stored, but the store may not have put them together yet (a server
      // died between S3's last part and CompleteMultipartUpload).
      await this.deps.storage.complete(record.id, record.length);
      const sha256 = await this.finalDigest(record);
      const staged = await this.deps.storage.stage(record.id, { sha256, size: record.length });
      // An upload into a request: its slot becomes the request's counts with the file, and
      // the request's largest file applies (it may have been lowered since the creation).
      const slot = await this.deps.store.uploadRequests.slotOfUpload(record.id);
      const request = slot ? await this.deps.store.uploadRequests.byId(slot.requestId) : null;
      created = await this.deps.uploads.upload({
        ...(request?.maxFileSize ? { limits: { maxFileSize: request.maxFileSize } } : {}),
        owner,
        // The folder it named hours ago may be gone: its bytes then land at the top level.
        folder: record.folderId === null ? null : { id: record.folderId, ifGone: 'root' },
        // A failure that is no refusal leaves the bytes where they are, for the client's
        // next request to finish the upload again.
        source: { kind: 'staged', staged, name: record.filename, reservationId: record.reservationId, startedAt: record.createdAt },
        expiresIn: record.expiresIn === null ? undefined : { kind: 'in', seconds: record.expiresIn },
        // The upload's row says stored in the file's transaction, so it is made once.
        within: async (repos, file) => {
          if (!(await repos.resumableUploads.markStored(record.id, file.id))) throw new Error(`upload ${record.id} was stored or removed meanwhile`);
          if (slot) await settleSlot(repos, this.deps.clock(), slot.requestId, slot.id, file.size);
        },
      });
    } catch (error) {
      // Nothing of a refused upload is kept (API.md 8: empty, blacklisted). Any other
      // failure (the database or the store unavailable for a moment) keeps the upload
      // whole: the client's next HEAD or PATCH finishes it.
      if (isRefusal(error)) {
        await this.deps.storage
          .remove(record.id)
          .catch((removeError: unknown) => this.deps.log(removeError, `removing the refused upload ${record.id} failed; gc removes it at its expiry`));
        await this.forget(record.id).catch((forgetError: unknown) => this.deps.log(forgetError, `forgetting the refused upload ${record.id} failed`));
        throw error;
      }
      if (error instanceof ApiError || error instanceof DatabaseBusyError) throw error;
      this.deps.log(error, 'storing a finished resumable upload failed; it stays for a retry');
      throw errors.uploadStorage();
    }
    return created;
  }

  /** Deletes the upload's row and ends its reservation and its request slot (if any), in one transaction. */
  private async forget(id: string): Promise<void> {
    this.live.drop(id);
    await this.deps.store.transaction(async (repos) => {
      const row = await repos.resumableUploads.take(id);
      if (row && row.fileId === null && row.reservationId !== null) await settleDetached(repos, row.reservationId, null);
      const slot = await repos.uploadRequests.slotOfUpload(id);
      if (slot) await repos.uploadRequests.takeSlot(slot.id);
      await repos.uploadRequests.unbindUpload(id);
    });
  }
}
