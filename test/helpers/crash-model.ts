/**
 * What the crash workload's clients know about the server's state: every operation they
 * sent, and whether it was acknowledged, refused, or cut by a kill (unknown outcome). The
 * final checks (crash-checks.ts) hold the server's state against it.
 */

/** One possible end state of a file: gone, or present in this folder (null: the top). */
export type FileState = { present: false } | { present: true; folder: string | null };

/** A file an acknowledged upload or copy created. */
export interface TrackedFile {
  id: string;
  /** Index of the owning client. */
  owner: number;
  name: string;
  sha256: string;
  size: number;
  origin: 'upload' | 'copy';
  /**
   * The states the file may be in at the end. One state while every operation on it was
   * acknowledged; two after an operation with an unknown outcome (before and after), and
   * then the client leaves the file alone (frozen), so the two stay the only choices.
   */
  states: FileState[];
  frozen: boolean;
}

/** An upload or copy whose answer never came: the file may exist, whole, or not at all. */
export interface UnknownCreation {
  owner: number;
  /** The upload's name, or the copy source's name (a copy keeps it). */
  name: string;
  sha256: string;
  size: number;
  origin: 'upload' | 'copy';
}

/** A move whose answer never came: all of its files moved, or none. */
export interface UnknownMove {
  owner: number;
  to: string;
  from: Map<string, string | null>;
}

/** One account of the workload. */
export interface ClientAccount {
  index: number;
  login: string;
  password: string;
  key: string;
  /** Acknowledged folders. */
  folders: string[];
}

/** How many of each kind of failure the run found; every one is also a line in `violations`. */
export interface Tally {
  /** An acknowledged file (or its bytes) missing. */
  lost: number;
  /** Bytes that differ from what was sent. */
  corrupt: number;
  /** Half of something: a blob whose content is not its name, a move half done. */
  partial: number;
  /** A file no operation explains. */
  phantom: number;
  /** A file in a folder no acknowledged move put it in. */
  wrongFolder: number;
  /** A file whose delete was acknowledged, still there. */
  undeleted: number;
  /** Premium traffic below zero, above the initial amount, or less charged than received. */
  overspent: number;
  /** Live blobs that gc removed. */
  gcRemovedLive: number;
  /** Blob files or rows without a live file after the final gc. */
  orphans: number;
  /** An answer the API does not document for that request. */
  unexpected: number;
  /** A request to a live server left unanswered for 30 s. */
  timeouts: number;
}

export interface Counts {
  uploads: number;
  copies: number;
  moves: number;
  deletes: number;
  folders: number;
  checks: number;
}

const zero = (): Counts => ({ uploads: 0, copies: 0, moves: 0, deletes: 0, folders: 0, checks: 0 });

export class CrashModel {
  /** Every file an acknowledged upload or copy created, by id. */
  readonly files = new Map<string, TrackedFile>();
  /** The same, in creation order: sources for copies and direct downloads. */
  readonly created: TrackedFile[] = [];
  readonly unknownCreations: UnknownCreation[] = [];
  readonly unknownMoves: UnknownMove[] = [];
  /** Ids a copy or a direct link answered 404 for: they must have been deleted (or maybe). */
  readonly reportedGone = new Set<string>();
  readonly acknowledged = zero();
  readonly unknown = zero();
  /** Requests refused at connect (sent after a kill): nothing happened. */
  refused = 0;
  /** Acknowledged uploads of a content uploaded before (de-duplicated). */
  dedupUploads = 0;
  bytesUploaded = 0;
  readonly tally: Tally = {
    lost: 0,
    corrupt: 0,
    partial: 0,
    phantom: 0,
    wrongFolder: 0,
    undeleted: 0,
    overspent: 0,
    gcRemovedLive: 0,
    orphans: 0,
    unexpected: 0,
    timeouts: 0,
  };
  /** Everything that contradicts a documented behaviour; the run fails on any. */
  readonly violations: string[] = [];

  violation(kind: keyof Tally, message: string): void {
    this.tally[kind] += 1;
    this.violations.push(`${kind}: ${message}`);
  }

  /** A file the client may still work on: no unknown outcome, not deleted. */
  isWorkable(file: TrackedFile): boolean {
    return !file.frozen && file.states.length === 1 && file.states[0]!.present;
  }

  /** The one folder of a workable file. */
  folderOf(file: TrackedFile): string | null {
    const state = file.states[0]!;
    return state.present ? state.folder : null;
  }

  track(file: Omit<TrackedFile, 'states' | 'frozen'>): TrackedFile {
    const tracked: TrackedFile = { ...file, states: [{ present: true, folder: null }], frozen: false };
    this.files.set(tracked.id, tracked);
    this.created.push(tracked);
    return tracked;
  }

  /** Whether the file may be gone at the end. */
  mayBeGone(file: TrackedFile): boolean {
    return file.states.some((state) => !state.present);
  }

  /** Whether the file may be present at the end. */
  mayBePresent(file: TrackedFile): boolean {
    return file.states.some((state) => state.present);
  }
}
