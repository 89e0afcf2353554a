import { humanBytes } from '../../config/units.js';
import type { ReservationRecord } from '../../db/repositories/repositories.js';
import { parseCommandArgs, UsageError } from '../args.js';
import { optionsFor } from '../help.js';
import { withServices } from '../with-services.js';

/** Rows listed at most; a site with more transfers in flight than this says so. */
const LIST_LIMIT = 1000;

/**
 * `filehaven reservations`: the transfers in flight, what each took from its account, how
 * far it has got, and who holds it. A row whose lease has run out belongs to a server that
 * died; the next gc (or that server's next start) settles it.
 */
export async function reservationsCommand(args: string[]): Promise<void> {
  const { positionals, values, settings } = parseCommandArgs(args, optionsFor('reservations'));
  if (positionals.length > 0) throw new UsageError('reservations takes no arguments');
  await withServices(settings, async (services) => {
    const rows = await services.reservations.list(LIST_LIMIT + 1);
    const shown = rows.slice(0, LIST_LIMIT);
    const logins = new Map<number, string>();
    for (const row of shown) {
      if (!logins.has(row.accountId)) logins.set(row.accountId, (await services.store.accounts.byId(row.accountId))?.login ?? `#${row.accountId}`);
    }
    const now = services.clock();
    if (values.json) {
      const listed = shown.map((row) => ({ ...row, login: logins.get(row.accountId)!, expired: row.leaseUntil < now }));
      console.log(JSON.stringify({ reservations: listed, truncated: rows.length > LIST_LIMIT }));
      return;
    }
    if (shown.length === 0) {
      console.log('no open reservations');
      return;
    }
    const table = [['ID', 'ACCOUNT', 'KIND', 'PLANNED', 'CHECKPOINT', 'SERVER', 'PROCESS', 'LEASE', 'AGE']];
    for (const row of shown) table.push(describe(row, logins.get(row.accountId)!, now));
    const widths = table[0]!.map((_, column) => Math.max(...table.map((cells) => cells[column]!.length)));
    for (const cells of table)
      console.log(
        cells
          .map((cell, column) => cell.padEnd(widths[column]!))
          .join('  ')
          .trimEnd(),
      );
    if (rows.length > LIST_LIMIT) console.log(`(the oldest ${LIST_LIMIT} shown; more are open)`);
  });
}

function describe(row: ReservationRecord, login: string, now: number): string[] {
  const lease = row.leaseUntil < now ? `expired ${seconds(now - row.leaseUntil)} ago` : `${seconds(row.leaseUntil - now)} left`;
  return [
    String(row.id),
    login,
    row.kind,
    humanBytes(row.planned),
    humanBytes(row.settled),
    row.server,
    row.instance.slice(0, 8),
    lease,
    seconds(now - row.createdAt),
  ];
}

const seconds = (ms: number) => `${Math.max(0, Math.round(ms / 1000))}s`;
