import type { MetadataStore } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';

/** How long a job's lease lasts unless renewed: a holder that dies frees the job this long after. */
export const RUN_LEASE_MS = 60_000;

/** Another holder (a server of the fleet, a CLI run) is running the job. */
export class RunningElsewhereError extends Error {
  override name = 'RunningElsewhereError';
  constructor(
    readonly job: string,
    readonly holder: string | null,
  ) {
    super(`${job} is already running${holder ? ` (${holder})` : ''}; try again once it is done`);
  }
}

/**
 * Runs `work` as the one holder of the job `name` across every server and CLI run on the
 * same database (issue 10: gc on one server at a time), through a lease row
 * (repositories: runLeases). The lease is renewed every third of RUN_LEASE_MS while the
 * work runs and released at its end, however it ends; a holder killed mid-run leaves a
 * lease that runs out. A job that lost its lease (a process stalled longer than the lease)
 * goes on: the lease only spares a second holder duplicate work, each step of the job
 * keeps the consistency rules under its own locks. Rejects with RunningElsewhereError
 * when another holder has it.
 */
export async function runAlone<T>(deps: { store: MetadataStore; clock: Clock; holder: string }, name: string, work: () => Promise<T>): Promise<T> {
  const { store, clock, holder } = deps;
  if (!(await store.runLeases.take(name, holder, clock() + RUN_LEASE_MS, clock()))) {
    throw new RunningElsewhereError(name, await store.runLeases.holderOf(name, clock()));
  }
  const renewing = setInterval(() => {
    store.runLeases.renew(name, holder, clock() + RUN_LEASE_MS).catch(() => {});
  }, RUN_LEASE_MS / 3);
  renewing.unref();
  try {
    return await work();
  } finally {
    clearInterval(renewing);
    await store.runLeases.release(name, holder).catch(() => {});
  }
}
