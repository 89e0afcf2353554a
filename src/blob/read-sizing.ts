/**
 * How big a download's reads are, and how many run at once (issue 28: 1,000 slow readers
 * held 3 MiB each, and a new request's file open waited behind a thousand 1 MiB reads in
 * libuv's thread pool).
 */

/** Every read starts at this size, and a slow reader stays there: 1,000 of them hold about 200 MB less than at 1 MiB. */
export const MIN_READ_BYTES = 64 * 1024;
/** A fast reader's reads grow to this (issue 9: a sixteenth of the system calls of 64 KiB). */
export const MAX_READ_BYTES = 1024 * 1024;
/**
 * A read is sized to what the reader takes in this long, as its last chunk showed: a
 * reader at 1 MB/s gets MIN_READ_BYTES, one at 50 MB/s or more gets MAX_READ_BYTES.
 */
const READ_AHEAD_MS = 20;
/**
 * Buffers above MIN_READ_BYTES all downloads together may hold. A slow reader looks fast
 * at its start, while the kernel's socket buffers take its first megabytes; with a
 * thousand starting at once, that would be a thousand grown buffers for a moment. The
 * budget bounds the moment: 64 fast downloads at 1 MiB (3 MiB each) fit.
 */
const GROWTH_BUDGET_BYTES = 192 * 1024 * 1024;
/**
 * File reads of downloads in libuv's thread pool at once (it has 4 threads unless
 * UV_THREADPOOL_SIZE says otherwise): the others wait their turn here, first come first
 * served, so a new request's open, stat or fsync finds a free thread at once instead of
 * queueing behind every download's next read.
 */
const READS_IN_FLIGHT = 2;

let budgetLeft = GROWTH_BUDGET_BYTES;
let readsRunning = 0;
const waitingReads: Array<() => void> = [];

/**
 * The size of a stream's next read: `current`, grown one step (×2) or shrunk to what its
 * reader takes in READ_AHEAD_MS, given that its last chunk of `lastBytes` was taken
 * `elapsedMs` after the one before.
 */
export function nextReadSize(current: number, lastBytes: number, elapsedMs: number): number {
  const wanted = (lastBytes / Math.max(elapsedMs, 0.001)) * READ_AHEAD_MS;
  if (wanted >= current * 2) return Math.min(current * 2, MAX_READ_BYTES);
  let size = current;
  while (size > MIN_READ_BYTES && wanted < size / 2) size /= 2;
  return size;
}

/**
 * Takes `bytes` more of the growth budget (a stream whose buffers grow); false when it is
 * spent, and the stream keeps its size.
 */
export function takeGrowth(bytes: number): boolean {
  if (bytes > budgetLeft) return false;
  budgetLeft -= bytes;
  return true;
}

/** Gives growth back (a stream that shrank or ended). */
export function giveGrowth(bytes: number): void {
  budgetLeft = Math.min(GROWTH_BUDGET_BYTES, budgetLeft + bytes);
}

/** Runs `read` when fewer than READS_IN_FLIGHT downloads' reads are running; in the order asked. */
export async function inTurn<T>(read: () => Promise<T>): Promise<T> {
  if (readsRunning >= READS_IN_FLIGHT) await new Promise<void>((resolve) => waitingReads.push(resolve));
  else readsRunning++;
  try {
    return await read();
  } finally {
    // The turn passes on directly, so a newcomer cannot overtake the queue.
    const next = waitingReads.shift();
    if (next) next();
    else readsRunning--;
  }
}
