import { createCipheriv, createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CHECKPOINT_BYTES } from '../../src/limits/reservations-service.js';
import { download, enclosureHref, entryId, errorCodeOf, type Outcome, request, trafficLeftOf } from './crash-http.js';
import type { ClientAccount, CrashModel, TrackedFile } from './crash-model.js';

/** A seeded PRNG (mulberry32): the same seed makes the same choices. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sha256Hex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** `size` pseudo-random bytes named by `tag` (AES-CTR keystream): fast, and never the same for two tags. */
export function contentFor(seed: number, tag: string, size: number): Buffer {
  const key = createHash('sha256').update(`filehaven-crash:${seed}:${tag}`).digest();
  return createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(size));
}

/** A size from a few bytes to `max`, spread evenly over the orders of magnitude, with the edges of 64 KiB chunks now and then. */
export function pickSize(rng: () => number, max: number): number {
  if (rng() < 0.1) {
    const edges = [1, 2, 65_535, 65_536, 65_537, 1024 * 1024];
    return Math.min(max, edges[Math.floor(rng() * edges.length)]!);
  }
  return Math.max(1, Math.min(max, Math.floor(Math.exp(rng() * Math.log(max)))));
}

/** One server start: its URL, and the flag that tells the clients a kill has come. */
export interface RoundState {
  url: string;
  stopping: boolean;
}

/** Shared by every client of a run. */
export interface ClientContext {
  model: CrashModel;
  seed: number;
  maxSize: number;
  /** Contents several clients upload again and again (de-duplication). */
  shared: Array<{ bytes: Buffer; sha256: string }>;
  /** Digests some acknowledged upload has sent. */
  uploadedDigests: Set<string>;
}

const pickFrom = <T>(rng: () => number, items: readonly T[]): T | undefined => items[Math.floor(rng() * items.length)];

/**
 * A client that owns one account and loops over a mixed workload until the round stops:
 * uploads (fresh and shared contents), copies of anyone's files, folders, moves and
 * deletes of its own files, and reads of its own files. Every answer is checked against
 * what the API documents; an operation cut by a kill is recorded as unknown, and the
 * files it touched are frozen with both possible outcomes.
 */
export class WorkloadClient {
  private seq = 0;
  /** Own files, acknowledged. */
  private readonly mine: TrackedFile[] = [];

  constructor(
    private readonly context: ClientContext,
    readonly account: ClientAccount,
    private readonly rng: () => number,
  ) {}

  async run(round: RoundState): Promise<void> {
    while (!round.stopping) {
      const roll = this.rng();
      if (roll < 0.4) await this.upload(round);
      else if (roll < 0.53) await this.copy(round);
      else if (roll < 0.66) await this.move(round);
      else if (roll < 0.8) await this.delete(round);
      else if (roll < 0.95) await this.check(round);
      else await this.createFolder(round);
    }
  }

  private get model(): CrashModel {
    return this.context.model;
  }

  private auth(): Record<string, string> {
    return { Authorization: this.account.key };
  }

  private workable(): TrackedFile[] {
    return this.mine.filter((file) => this.model.isWorkable(file));
  }

  /** Records an answer the API does not document for this request, or a timeout. */
  private unexpected(what: string, outcome: Outcome): void {
    if (outcome.kind === 'timeout') this.model.violation('timeouts', `${what}: no answer within 30 s`);
    else if (outcome.kind === 'answer')
      this.model.violation('unexpected', `${what}: ${outcome.status} ${errorCodeOf(outcome.body) ?? outcome.body.slice(0, 200)}`);
  }

  private async upload(round: RoundState): Promise<void> {
    const tag = `c${this.account.index}-${this.seq++}`;
    const shared = this.rng() < 0.3 ? pickFrom(this.rng, this.context.shared) : undefined;
    const bytes = shared?.bytes ?? contentFor(this.context.seed, tag, pickSize(this.rng, this.context.maxSize));
    const sha256 = shared?.sha256 ?? sha256Hex(bytes);
    // The name is unique, so a file an unanswered upload left can be told by it.
    const name = `${tag}-${bytes.length}.bin`;
    const form = new FormData();
    form.append('upload', new Blob([new Uint8Array(bytes)]), name);
    const outcome = await request(`${round.url}/files`, { method: 'POST', headers: this.auth(), body: form });
    if (outcome.kind === 'answer' && outcome.status === 201) {
      const id = entryId(outcome.body);
      if (!id) return this.model.violation('unexpected', `upload ${name}: 201 without an id: ${outcome.body.slice(0, 200)}`);
      if (this.context.uploadedDigests.has(sha256)) this.model.dedupUploads += 1;
      this.context.uploadedDigests.add(sha256);
      this.model.acknowledged.uploads += 1;
      this.model.bytesUploaded += bytes.length;
      this.mine.push(this.model.track({ id, owner: this.account.index, name, sha256, size: bytes.length, origin: 'upload' }));
    } else if (outcome.kind === 'unknown') {
      this.model.unknown.uploads += 1;
      this.model.unknownCreations.push({ owner: this.account.index, name, sha256, size: bytes.length, origin: 'upload' });
    } else if (outcome.kind === 'refused') {
      this.model.refused += 1;
    } else {
      this.unexpected(`upload ${name}`, outcome);
    }
  }

  private async copy(round: RoundState): Promise<void> {
    const source = pickFrom(this.rng, this.model.created);
    if (!source) return this.upload(round);
    const outcome = await request(`${round.url}/files/copy/${source.id}`, { method: 'POST', headers: this.auth() });
    if (outcome.kind === 'answer' && outcome.status === 201) {
      const id = entryId(outcome.body);
      if (!id) return this.model.violation('unexpected', `copy of ${source.id}: 201 without an id`);
      this.model.acknowledged.copies += 1;
      this.mine.push(this.model.track({ id, owner: this.account.index, name: source.name, sha256: source.sha256, size: source.size, origin: 'copy' }));
    } else if (outcome.kind === 'answer' && outcome.status === 404 && errorCodeOf(outcome.body) === 'errorFileNotFound') {
      // Its owner deleted it (maybe with an answer still on its way): checked at the end.
      this.model.reportedGone.add(source.id);
    } else if (outcome.kind === 'unknown') {
      this.model.unknown.copies += 1;
      this.model.unknownCreations.push({ owner: this.account.index, name: source.name, sha256: source.sha256, size: source.size, origin: 'copy' });
    } else if (outcome.kind === 'refused') {
      this.model.refused += 1;
    } else {
      this.unexpected(`copy of ${source.id}`, outcome);
    }
  }

  private async createFolder(round: RoundState): Promise<void> {
    if (this.account.folders.length >= 3) return this.check(round);
    const name = `c${this.account.index}-folder-${this.seq++}`;
    const outcome = await request(`${round.url}/folders`, { method: 'POST', headers: this.auth(), body: new URLSearchParams({ name }) });
    if (outcome.kind === 'answer' && outcome.status === 201) {
      const id = entryId(outcome.body);
      if (!id) return this.model.violation('unexpected', `folder ${name}: 201 without an id`);
      this.model.acknowledged.folders += 1;
      this.account.folders.push(id);
    } else if (outcome.kind === 'unknown') {
      // A folder that may exist is simply never used.
      this.model.unknown.folders += 1;
    } else if (outcome.kind === 'refused') {
      this.model.refused += 1;
    } else {
      this.unexpected(`folder ${name}`, outcome);
    }
  }

  private async move(round: RoundState): Promise<void> {
    const to = pickFrom(this.rng, this.account.folders);
    if (!to) return this.createFolder(round);
    const candidates = this.workable().filter((file) => this.model.folderOf(file) !== to);
    const picked = new Set<TrackedFile>();
    const want = 1 + Math.floor(this.rng() * 3);
    for (let i = 0; i < want * 2 && picked.size < want && candidates.length > 0; i++) picked.add(pickFrom(this.rng, candidates)!);
    if (picked.size === 0) return this.upload(round);
    const files = [...picked];
    const body = new URLSearchParams(files.map((file, i) => [`files[${i}]`, file.id]));
    const outcome = await request(`${round.url}/folders/${to};files`, { method: 'PUT', headers: this.auth(), body });
    if (outcome.kind === 'answer' && outcome.status === 200) {
      this.model.acknowledged.moves += 1;
      for (const file of files) file.states = [{ present: true, folder: to }];
    } else if (outcome.kind === 'unknown') {
      this.model.unknown.moves += 1;
      const from = new Map(files.map((file) => [file.id, this.model.folderOf(file)]));
      this.model.unknownMoves.push({ owner: this.account.index, to, from });
      for (const file of files) {
        file.states = [
          { present: true, folder: from.get(file.id)! },
          { present: true, folder: to },
        ];
        file.frozen = true;
      }
    } else if (outcome.kind === 'refused') {
      this.model.refused += 1;
    } else {
      this.unexpected(`move of ${files.map((f) => f.id).join(',')} to ${to}`, outcome);
    }
  }

  private async delete(round: RoundState): Promise<void> {
    const file = pickFrom(this.rng, this.workable());
    if (!file) return this.upload(round);
    const outcome = await request(`${round.url}/files/${file.id}`, { method: 'DELETE', headers: this.auth() });
    if (outcome.kind === 'answer' && outcome.status === 200) {
      this.model.acknowledged.deletes += 1;
      file.states = [{ present: false }];
    } else if (outcome.kind === 'unknown') {
      this.model.unknown.deletes += 1;
      file.states = [...file.states, { present: false }];
      file.frozen = true;
    } else if (outcome.kind === 'refused') {
      this.model.refused += 1;
    } else {
      this.unexpected(`delete of ${file.id}`, outcome);
    }
  }

  /** Reads one of its own files back: details (or 404 once deleted), and the bytes of small ones. */
  private async check(round: RoundState): Promise<void> {
    const file = pickFrom(this.rng, this.mine);
    // Something that does I/O either way: a loop of instant returns would starve the event loop.
    if (!file || file.frozen) return this.upload(round);
    const deleted = !this.model.mayBePresent(file);
    const outcome = await request(`${round.url}/files/${file.id}`, { headers: this.auth() });
    if (outcome.kind !== 'answer') {
      if (outcome.kind === 'timeout') this.unexpected(`details of ${file.id}`, outcome);
      return;
    }
    this.model.acknowledged.checks += 1;
    if (deleted) {
      if (outcome.status !== 404 || errorCodeOf(outcome.body) !== 'errorFileNotFound') {
        this.model.violation('undeleted', `${file.id} was deleted (acknowledged), GET /files/<id> answered ${outcome.status}`);
      }
      return;
    }
    if (outcome.status !== 200)
      return this.model.violation('lost', `${file.id} (acknowledged) answered ${outcome.status} ${errorCodeOf(outcome.body)} during the workload`);
    const href = enclosureHref(outcome.body);
    if (!href || file.size > 512 * 1024) return;
    const got = await download(`${href}?download=1`);
    if (!got.complete) {
      if (got.outcome.kind === 'answer') this.model.violation('lost', `${file.id} (acknowledged) download answered ${got.outcome.status} during the workload`);
      return;
    }
    if (got.sha256 !== file.sha256) this.model.violation('corrupt', `${file.id}: ${got.received} bytes with another SHA-256 than the ${file.size} sent`);
  }
}

/** The most a kill may leave uncharged of one download it cut: a checkpoint and the socket buffers. */
const CRASH_UNDERCHARGE_BOUND = CHECKPOINT_BYTES + 8 * 1024 * 1024;

/** Premium traffic: what the client got, and what the account says. */
export interface TrafficLedger {
  initial: number;
  /** Body bytes that reached the client, cut downloads included. */
  received: number;
  /** The lowest `premium_trafficLeft` seen. */
  lowest: number;
  downloads: number;
  complete: number;
  /** Downloads refused for lack of traffic (403). */
  refused: number;
  checks: number;
}

/**
 * A premium account downloading anyone's files through direct links, charging its
 * traffic, and reading `premium_trafficLeft` now and then.
 */
export class TrafficClient {
  constructor(
    private readonly model: CrashModel,
    private readonly key: string,
    private readonly ledger: TrafficLedger,
    private readonly rng: () => number,
  ) {}

  async run(round: RoundState): Promise<void> {
    while (!round.stopping) {
      const source = pickFrom(this.rng, this.model.created);
      if (!source) {
        await sleep(20);
        continue;
      }
      await this.directDownload(round, source);
      if (this.ledger.downloads % 4 === 0) await checkTraffic(this.model, this.ledger, round.url, this.key, 'during the workload');
    }
  }

  private async directDownload(round: RoundState, source: TrackedFile): Promise<void> {
    const headers = { Authorization: this.key };
    const link = await request(`${round.url}/files/${source.id};DirectLink`, { headers });
    if (link.kind !== 'answer') return;
    if (link.status === 404 && errorCodeOf(link.body) === 'errorFileNotFound') {
      this.model.reportedGone.add(source.id);
      return;
    }
    const href = link.status === 200 ? enclosureHref(link.body) : null;
    if (!href) return this.model.violation('unexpected', `direct link of ${source.id}: ${link.status} ${errorCodeOf(link.body) ?? link.body.slice(0, 200)}`);
    this.ledger.downloads += 1;
    const got = await download(href, headers, (n) => (this.ledger.received += n));
    if (got.complete) {
      this.ledger.complete += 1;
      if (got.received !== source.size || got.sha256 !== source.sha256) {
        this.model.violation('corrupt', `direct download of ${source.id}: ${got.received} bytes, not the ${source.size} sent, or other bytes`);
      }
      return;
    }
    const outcome = got.outcome;
    if (outcome.kind !== 'answer') return;
    const code = errorCodeOf(outcome.body);
    if (outcome.status === 403 && code === 'errorPermissionDenied') {
      // The traffic is spent: the conditional reservation refused it before any byte.
      this.ledger.refused += 1;
      await sleep(10);
    } else if ((outcome.status === 404 && code === 'errorFileNotFound') || (outcome.status === 410 && code === 'errorFileInNoDownloadedStatus')) {
      this.model.reportedGone.add(source.id);
    } else {
      this.model.violation('unexpected', `direct download of ${source.id}: ${outcome.status} ${code}`);
    }
  }
}

/**
 * Reads `premium_trafficLeft` and holds it to what can be asserted across kills: never
 * below zero, never above the initial amount, and charged for what the client received,
 * less at most what a crash may leave uncharged of each download it cut (one checkpoint
 * and the socket buffers: services/reservations-service.ts). With no download in flight
 * (`settled`: after a restart, at the end) never charged more than was received. The bytes
 * received are read before asking, so a download started meanwhile cannot make the
 * comparison unfair.
 */
export async function checkTraffic(model: CrashModel, ledger: TrafficLedger, url: string, key: string, when: string, settled = false): Promise<number | null> {
  const received = ledger.received;
  const cut = ledger.downloads - ledger.complete - ledger.refused;
  const outcome = await request(`${url}/account`, { headers: { Authorization: key } });
  if (outcome.kind !== 'answer') return null;
  const left = outcome.status === 200 ? trafficLeftOf(outcome.body) : null;
  if (left === null) {
    model.violation('unexpected', `GET /account ${when}: ${outcome.status} ${outcome.body.slice(0, 200)}`);
    return null;
  }
  ledger.checks += 1;
  ledger.lowest = Math.min(ledger.lowest, left);
  const charged = ledger.initial - left;
  if (left < 0) model.violation('overspent', `premium_trafficLeft ${left} < 0 ${when}`);
  if (left > ledger.initial) model.violation('overspent', `premium_trafficLeft ${left} above the initial ${ledger.initial} ${when}`);
  if (received - charged > cut * CRASH_UNDERCHARGE_BOUND) {
    model.violation('overspent', `charged ${charged} bytes but the client received ${received}, more than ${cut} cut downloads explain ${when}`);
  }
  if (settled && charged > received) model.violation('overspent', `charged ${charged} bytes for ${received} received ${when}`);
  return left;
}
