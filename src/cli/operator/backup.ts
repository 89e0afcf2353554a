import path from 'node:path';
import { type BackupReport, createBackup } from '../../backup/backup-service.js';
import { type RestoreReport, restoreBackup } from '../../backup/restore-service.js';
import { type Config, loadConfig } from '../../config/config.js';
import { InputError } from '../../domain/errors.js';
import { parseCommandArgs, required } from '../args.js';
import { auditFolder } from '../audit-trail.js';
import { noPositionals } from '../flags.js';
import { optionsFor } from '../help.js';
import { interruptible } from '../interruptible.js';

/** `filehaven backup`: database snapshot, the blobs it uses and the secret, while the server runs. */
export async function backupCommand(args: string[]): Promise<void> {
  const { positionals, values, settings } = parseCommandArgs(args, optionsFor('backup'));
  noPositionals(positionals, 'backup');
  const to = required(values, 'to');
  const config = loadConfig(settings, process.env);
  embeddedDefaultOnly(config, 'backup');
  const report = await interruptible((signal) => createBackup({ dataDir: config.dataDir, secret: config.secret, to, signal }), removedOnInterrupt('backup'));
  const { manifest } = report;
  try {
    await auditFolder(
      config.dataDir,
      'backup.create',
      `backup:${report.dir}`,
      `${manifest.files.live} files, ${manifest.blobs.count} blobs, ${manifest.blobs.bytes} bytes`,
    );
  } catch (error) {
    throw new InputError(`the backup in ${report.dir} is complete, but recording it in the audit log failed: ${(error as Error).message}`);
  }
  console.log(values.json ? JSON.stringify(report) : describeBackup(report));
}

/** `filehaven restore`: a backup into a new data folder, every byte verified first. */
export async function restoreCommand(args: string[]): Promise<void> {
  const { positionals, values, settings } = parseCommandArgs(args, optionsFor('restore'));
  noPositionals(positionals, 'restore');
  const from = required(values, 'from');
  const config = loadConfig(settings, process.env);
  embeddedDefaultOnly(config, 'restore');
  const report = await interruptible(
    (signal) =>
      restoreBackup({
        from,
        dataDir: config.dataDir,
        secret: config.secret,
        signal,
        // In the restored database's own log, before it is moved into place.
        beforePublish: (folder, manifest) =>
          auditFolder(folder, 'backup.restore', `backup:${path.resolve(from)}`, `taken ${manifest.createdAt} from ${manifest.source}`),
      }),
    removedOnInterrupt('restore'),
  );
  console.log(values.json ? JSON.stringify(report) : describeRestore(report));
}

/** What an interrupted backup or restore tells: it removed what it had written. */
const removedOnInterrupt = (what: string) => (reason: string) => `${what} interrupted by ${reason}; what it had written was removed`;

const line = (label: string, value: string) => `${label.padEnd(12)}${value}`;

function describeBackup({ dir, manifest, secretVerified }: BackupReport): string {
  const secret =
    manifest.secret === 'file'
      ? 'in the backup (mode 0600)'
      : `not in the backup: the site takes it from --secret or FILEHAVEN_SECRET; keep it with the backup${secretVerified ? '' : ' (not checked: this command was not given it)'}`;
  return [
    `backup complete in ${dir}`,
    line('taken', manifest.createdAt),
    line('database', `${manifest.database.file}, ${manifest.database.bytes} bytes, sha256 ${manifest.database.sha256}`),
    line('files', `${manifest.files.live} live`),
    line('blobs', `${manifest.blobs.count}, ${manifest.blobs.bytes} bytes, each verified`),
    line('secret', secret),
    line('snapshots', String(manifest.snapshots)),
  ].join('\n');
}

function describeRestore({ dataDir, manifest, secretVerified }: RestoreReport): string {
  return [
    `restored into ${dataDir}, every byte verified`,
    line('taken', `${manifest.createdAt} from ${manifest.source}`),
    line('files', `${manifest.files.live} live`),
    line('blobs', `${manifest.blobs.count}, ${manifest.blobs.bytes} bytes`),
    ...(secretVerified ? [] : [line('secret', 'not in the backup: start the server with the --secret or FILEHAVEN_SECRET the site used')]),
    `start it with: filehaven serve --data ${dataDir}`,
  ].join('\n');
}

/**
 * Backup and restore copy the embedded default (SQLite and the data folder). A site on
 * PostgreSQL or S3 has those services' own tools; copying the data folder would miss it.
 */
function embeddedDefaultOnly(config: Config, command: string): void {
  const elsewhere = [config.databaseUrl !== null && 'PostgreSQL (--database-url)', config.s3Bucket !== null && 'S3 (--s3-bucket)'].filter(Boolean);
  if (elsewhere.length > 0) {
    throw new InputError(
      `${command} works on the data folder's SQLite and blobs, and this site uses ${elsewhere.join(' and ')}: use pg_dump and bucket versioning instead (docs/backups.md)`,
    );
  }
}
