import path from 'node:path';
import type { BlobStore } from '../../blob/blob-store.js';
import { secretMatchesSite } from '../../composition.js';
import { type Config, ConfigError, DEFAULTS, loadConfig, SETTINGS } from '../../config/config.js';
import { readSecretFile, SECRET_FILE } from '../../config/secret-file.js';
import { checkSiteFolder } from '../../config/site-folder.js';
import { humanBytes } from '../../config/units.js';
import { openConfiguredBlobStore, openConfiguredMetadataStore, openDatabase, redactUrl, rootCause } from '../../configured-stores.js';
import { type OpenedDatabase, SQLITE_FILE } from '../../db/dialect.js';
import { migrateToLatest } from '../../db/migrator.js';
import { type MigrateProgress, type MigrateReport, migrateSite } from '../../migrate/migrate-service.js';
import { ServerSecrets } from '../../security/secrets.js';
import { parseCommandArgs, UsageError } from '../args.js';
import { noPositionals } from '../flags.js';
import { interruptible } from '../interruptible.js';

/** The settings that say where the site is stored; each has a `--to-` twin naming the target. */
const MOVABLE = SETTINGS.filter((s) => s.key.startsWith('database') || s.key.startsWith('s3'));
/** `--to-s3-force-path-style` may stand alone, meaning true. */
const BOOLEAN_FLAGS = MOVABLE.filter((s) => (s.parse as (raw: string) => unknown)('true') === true).map((s) => `--to-${s.flag}`);

/** Lines of progress at most this often (a phase's last line always shows). */
const PROGRESS_INTERVAL_MS = 500;

/**
 * `filehaven migrate`: the site of the current settings (--data, --database-url, --s3-*)
 * into the same settings with the --to-* overrides, then verified. The server must be
 * stopped throughout: nothing here can tell whether it runs.
 */
export async function migrateCommand(args: string[]): Promise<void> {
  const options = Object.fromEntries(MOVABLE.map((s) => [`to-${s.flag}`, { type: 'string' as const }]));
  const { positionals, values, settings } = parseCommandArgs(standaloneBooleans(args), options);
  noPositionals(positionals, 'migrate');
  const source = loadConfig(settings, process.env);
  const { target, metadataMoves, blobsMove } = targetConfig(source, values);
  await checkSourceSite(source);

  const opened: Array<{ db: { destroy(): Promise<void> } }> = [];
  try {
    const sourceDb = openDatabase(source);
    opened.push(sourceDb);
    const targetDb = metadataMoves ? await openTargetDatabase(target) : null;
    if (targetDb) opened.push(targetDb);
    const sourceBlobs = await openConfiguredBlobStore(source);
    const targetBlobs = blobsMove ? await openTargetBlobStore(target) : null;

    const print = progressPrinter((line) => console.log(line));
    const onProgress = (progress: MigrateProgress) => {
      if (progress.phase !== 'start') return print(progress);
      // Printed once the target passed its checks, so a refusal is the only line.
      console.log(`migrating ${describe(source, true, true)}`);
      console.log(`       to ${describe(target, metadataMoves, blobsMove)}`);
      console.log('the server must stay stopped until this command has finished (the maintenance window)');
      if (progress.resumed) console.log('resuming: the target holds part of an earlier run; what is there is kept');
    };
    const report = await interruptible(
      (signal) => migrateSite({ source: { database: sourceDb, blobs: sourceBlobs }, targetDatabase: targetDb, targetBlobs, signal, onProgress }),
      // SIGINT/SIGTERM abort the copy: blobs in flight are dropped, and a rerun resumes.
      (reason) => `migration interrupted by ${reason}; the target keeps what was copied: run the same command again to resume`,
    );
    console.log(summary(report, source, target, metadataMoves, blobsMove));
  } finally {
    for (const { db } of opened) await db.destroy().catch(() => {});
  }
}

/** `--to-s3-force-path-style` alone becomes `--to-s3-force-path-style=true`. */
function standaloneBooleans(args: string[]): string[] {
  return args.map((arg, i) => (BOOLEAN_FLAGS.includes(arg) && (args[i + 1] === undefined || args[i + 1]!.startsWith('--')) ? `${arg}=true` : arg));
}

/** The source settings with the --to-* overrides, validated as the settings themselves are. */
function targetConfig(source: Config, values: Record<string, string | boolean | undefined>): { target: Config; metadataMoves: boolean; blobsMove: boolean } {
  const target: Record<string, unknown> = { ...source };
  const given: Array<{ key: keyof Config; flag: string }> = [];
  for (const setting of MOVABLE) {
    const raw = values[`to-${setting.flag}`];
    if (typeof raw !== 'string') continue;
    const value = (setting.parse as (raw: string) => unknown)(raw);
    if (value === undefined || value === null) throw new UsageError(`invalid --to-${setting.flag} "${raw}": expected ${setting.expected}`);
    target[setting.key] = value;
    given.push({ key: setting.key, flag: `--to-${setting.flag}` });
  }
  if (given.length === 0) throw new UsageError('say where the site moves: --to-database-url and/or --to-s3-bucket');
  const result = target as unknown as Config;
  const orphanDb = given.find((g) => g.key.startsWith('database'));
  if (result.databaseUrl === null && orphanDb) throw new UsageError(`${orphanDb.flag} needs --to-database-url: the site's metadata is in SQLite`);
  const orphanS3 = given.find((g) => g.key.startsWith('s3'));
  if (result.s3Bucket === null && orphanS3) throw new UsageError(`${orphanS3.flag} needs --to-s3-bucket: the site's blobs are in the data folder`);
  const metadataMoves = result.databaseUrl !== null && (result.databaseUrl !== source.databaseUrl || result.databaseSchema !== source.databaseSchema);
  const blobsMove =
    result.s3Bucket !== null && (result.s3Bucket !== source.s3Bucket || result.s3Endpoint !== source.s3Endpoint || result.s3Prefix !== source.s3Prefix);
  if (!metadataMoves && !blobsMove) {
    throw new ConfigError('source and target are the same: the --to-* settings name the database and blob store the site already uses');
  }
  return { target: result, metadataMoves, blobsMove };
}

/**
 * The source must be a site (a wrong --data would otherwise be an empty new one), and the
 * secret at hand the one its API keys are sealed with: the migrated site starts with it.
 */
async function checkSourceSite(source: Config): Promise<void> {
  await checkSiteFolder(source);
  const secret = source.secret ?? (await readSecretFile(source.dataDir));
  if (secret === null) {
    throw new ConfigError(
      `no server secret: ${path.join(source.dataDir, SECRET_FILE)} does not exist and --secret (FILEHAVEN_SECRET) is not set; the migrated site needs the secret its API keys are sealed with`,
    );
  }
  // Migrates the source's schema to the latest too, as a server start would: the copy
  // needs both ends on the same columns.
  const store = await openConfiguredMetadataStore(source);
  try {
    if (!(await secretMatchesSite(store, new ServerSecrets(secret)))) {
      throw new ConfigError(
        'the server secret differs from the one this site was set up with; migrate with its original secret (--secret, FILEHAVEN_SECRET or <data>/secret)',
      );
    }
  } finally {
    await store.close();
  }
}

async function openTargetDatabase(target: Config): Promise<OpenedDatabase> {
  const opened = openDatabase(target);
  try {
    await migrateToLatest(opened.db, opened.schema);
  } catch (error) {
    await opened.db.destroy().catch(() => {});
    throw new ConfigError(
      `cannot use the target PostgreSQL at ${redactUrl(target.databaseUrl!)} schema ${target.databaseSchema} (--to-database-url, --to-database-schema): ${rootCause(error)}`,
    );
  }
  return opened;
}

async function openTargetBlobStore(target: Config): Promise<BlobStore> {
  try {
    return await openConfiguredBlobStore(target);
  } catch (error) {
    // The store's message names the serve flags (--s3-bucket); here they are --to-s3-*.
    if (error instanceof ConfigError) throw new ConfigError(`target: ${error.message.replaceAll('(--s3-', '(--to-s3-')}`);
    throw error;
  }
}

/** Where a configuration keeps metadata and blobs, for the first lines. */
function describe(config: Config, database: boolean, blobs: boolean): string {
  const parts: string[] = [];
  if (database)
    parts.push(
      config.databaseUrl === null
        ? `SQLite ${path.join(config.dataDir, SQLITE_FILE)}`
        : `PostgreSQL ${redactUrl(config.databaseUrl)} schema ${config.databaseSchema}`,
    );
  if (blobs)
    parts.push(
      config.s3Bucket === null
        ? `blobs in ${path.join(config.dataDir, 'blobs')}`
        : `S3 bucket ${config.s3Bucket}${config.s3Prefix ? ` prefix ${config.s3Prefix}` : ''}${config.s3Endpoint ? ` at ${config.s3Endpoint}` : ''}`,
    );
  return parts.join(' + ');
}

/**
 * Progress lines: `tables: accounts 12/12`, `blobs: 1200/5000 (3.1 GiB/9.8 GiB)`, at most
 * one every PROGRESS_INTERVAL_MS, except that the blob phase's first line and each table's
 * and the blob phase's last line always show (the record of what was copied).
 */
export function progressPrinter(print: (line: string) => void, now: () => number = Date.now): (progress: Exclude<MigrateProgress, { phase: 'start' }>) => void {
  let last = -Infinity;
  let printed = '';
  return (progress) => {
    const { line, finished } = progressLine(progress);
    const at = now();
    if (line === printed) return;
    // The blob phase's first line shows at once: it is the long one, and says how long.
    const first = progress.phase === 'blobs' && progress.done === 0;
    if (!first && !(finished && progress.phase !== 'verify') && at - last < PROGRESS_INTERVAL_MS) return;
    last = at;
    printed = line;
    print(line);
  };
}

function progressLine(progress: Exclude<MigrateProgress, { phase: 'start' }>): { line: string; finished: boolean } {
  switch (progress.phase) {
    case 'tables':
      return { line: `tables: ${progress.table} ${progress.copied}/${progress.total}`, finished: progress.copied === progress.total };
    case 'blobs':
      return {
        line: `blobs: ${progress.done}/${progress.total} (${humanBytes(progress.bytes)}/${humanBytes(progress.totalBytes)})`,
        finished: progress.done === progress.total,
      };
    case 'verify':
      return { line: `verify: ${progress.table} ${progress.checked}/${progress.total}`, finished: progress.checked === progress.total };
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function summary(report: MigrateReport, source: Config, target: Config, metadataMoves: boolean, blobsMove: boolean): string {
  const lines = [`migration complete and verified in ${seconds(report.ms)}${report.resumed ? ' (resumed an earlier run)' : ''}`];
  if (report.tables.length > 0) {
    const rows = report.tables.reduce((sum, t) => sum + t.rows, 0);
    lines.push(
      `  tables  ${report.tables.length}, ${rows} rows, every row identical in source and target (${report.tables.map((t) => `${t.name} ${t.rows}`).join(', ')})`,
    );
  }
  if (report.blobs) {
    const b = report.blobs;
    const perSecond = b.copied / (b.ms / 1000);
    const rate =
      b.copied > 0 && b.ms > 0 ? `, ${perSecond.toFixed(perSecond < 10 ? 1 : 0)} blobs/s, ${humanBytes(Math.round(b.copiedBytes / (b.ms / 1000)))}/s` : '';
    lines.push(
      `  blobs   ${b.count} (${humanBytes(b.bytes)}): ${b.copied} copied now (${humanBytes(b.copiedBytes)} in ${seconds(b.ms)}${rate}), ${b.earlier} by an earlier run`,
    );
    lines.push("          every blob's bytes were hashed while copied and matched its row's SHA-256 and size");
  }
  lines.push('start the server on the new backend with your other settings and:', `  filehaven serve ${serveFlags(target).join(' ')}`);
  const notes: string[] = [];
  if (target.databaseUrl !== null && hasPassword(target.databaseUrl)) notes.push('the database password is shown as ***: give it as you did here');
  notes.push(
    target.secret === null
      ? `the secret stays in ${path.join(target.dataDir, SECRET_FILE)}: keep that file (mode 0600) with the server`
      : 'the same --secret (FILEHAVEN_SECRET) as now',
  );
  if (target.s3Bucket !== null) notes.push('S3 credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an AWS profile), as now');
  lines.push(...notes.map((note) => `  (${note})`));
  if (metadataMoves) lines.push(`the source database (${describe(source, true, false)}) is unchanged: keep it until the new site has run a while`);
  if (metadataMoves && !blobsMove) {
    // Both databases now name the same blobs, and the old one knows nothing of new uploads.
    lines.push(
      "the blobs stay where they are, named by both databases: never start a server or run gc on the old settings again (its gc would delete the new site's uploads)",
    );
  }
  if (blobsMove) {
    lines.push(
      metadataMoves
        ? `the source blobs (${describe(source, false, true)}) are unchanged: remove them once the new site runs`
        : `the database now names the blobs in the new store: start the server with the S3 settings above only; the old blobs (${describe(source, false, true)}) are no longer used`,
    );
  }
  return lines.join('\n');
}

/** The storage settings of the target that differ from the defaults, as `serve` flags. */
function serveFlags(target: Config): string[] {
  const flags = ['--data', quote(target.dataDir)];
  for (const setting of MOVABLE) {
    const value = target[setting.key];
    if (value === null || value === DEFAULTS[setting.key]) continue;
    const text = setting.key === 'databaseUrl' ? redactUrl(String(value)) : String(value);
    flags.push(`--${setting.flag}`, quote(text));
  }
  return flags;
}

function hasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return false;
  }
}

/** A shell word: as it is when plain, else in single quotes. */
function quote(text: string): string {
  return /^[A-Za-z0-9_./:@=+,-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
