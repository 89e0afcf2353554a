import { humanBytes } from '../../config/units.js';
import type { GcReport, StatsReport } from '../../services/gc-service.js';
import { RUN_LEASE_MS, RunningElsewhereError } from '../../services/run-alone.js';
import { parseCommandArgs, UsageError } from '../args.js';
import { optionsFor } from '../help.js';
import { withServices } from '../with-services.js';

/** `filehaven gc`: one housekeeping pass (the server also runs it every --gc-interval). */
export async function gcCommand(args: string[]): Promise<void> {
  const { positionals, values, settings } = parseCommandArgs(args, optionsFor('gc'));
  if (positionals.length > 0) throw new UsageError('gc takes no arguments');
  await withServices(settings, async (services) => {
    const run = () => services.gc.run({ dryRun: values['dry-run'] === true });
    const report = values.wait === true ? await runWhenFree(run) : await run();
    console.log(values.json ? JSON.stringify(report) : describeGc(report));
  });
}

/** `filehaven stats`: accounts, files, storage, de-duplication, traffic, expiry. */
export async function statsCommand(args: string[]): Promise<void> {
  const { positionals, values, settings } = parseCommandArgs(args, optionsFor('stats'));
  if (positionals.length > 0) throw new UsageError('stats takes no arguments');
  await withServices(settings, async (services) => {
    const stats = await services.gc.stats();
    console.log(values.json ? JSON.stringify(stats) : describeStats(stats));
  });
}

const line = (label: string, value: string) => `${label.padEnd(20)}${value}`;

function describeGc(report: GcReport): string {
  return [
    report.dryRun ? 'gc dry run, nothing changed; a run now would remove:' : 'gc done, removed:',
    line('expired files', String(report.filesExpired)),
    line('unreferenced blobs', String(report.blobsRemoved)),
    line('orphan blob files', String(report.orphanFilesRemoved)),
    line('bytes freed', bytes(report.bytesFreed)),
    line('temp files', String(report.tempFilesRemoved)),
    line('upload log rows', String(report.uploadLogPruned)),
    line('reservations', `${report.reservationsSettled} settled, ${bytes(report.trafficRefunded)} of traffic refunded`),
    line('resumable uploads', `${report.resumableUploadsExpired} expired and removed`),
    line('thumbnails', String(report.thumbnailsRemoved)),
  ].join('\n');
}

function describeStats(stats: StatsReport): string {
  const files = (state: keyof StatsReport['files']) => `${stats.files[state].count}, ${bytes(stats.files[state].bytes)}`;
  return [
    line('accounts', String(stats.accounts)),
    line('files active', files('active')),
    line('files blocked', files('blocked')),
    line('files deleted', files('deleted')),
    line('stored', `${stats.stored.blobs} blobs, ${bytes(stats.stored.bytes)}`),
    line('saved by de-dup', bytes(stats.dedupSavedBytes)),
    line('downloads', String(stats.downloads)),
    line('traffic served', bytes(stats.bytesServed)),
    line('expiry', stats.expiry ? `after ${stats.expiry.afterDays} days; ${stats.expiry.wouldExpire} files would expire now` : 'off'),
  ].join('\n');
}

/** Exact bytes, with a binary-unit reading for people. */
function bytes(n: number): string {
  return n < 1024 ? `${n} bytes` : `${n} bytes (${humanBytes(n)})`;
}

/**
 * `gc --wait`: while another holder runs gc (a server, or one killed mid-run whose lease
 * has yet to run out), try again every 2 s, for up to twice the lease.
 */
async function runWhenFree<T>(run: () => Promise<T>): Promise<T> {
  const until = Date.now() + 2 * RUN_LEASE_MS;
  for (;;) {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof RunningElsewhereError) || Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}
