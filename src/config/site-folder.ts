import { stat } from 'node:fs/promises';
import path from 'node:path';
import { SQLITE_FILE } from '../db/dialect.js';
import { type Config, ConfigError } from './config.js';
import { SECRET_FILE } from './secret-file.js';

const WHERE = '(--data, FILEHAVEN_DATA)';
const ONLY_SERVE_AND_INIT = "give the folder 'filehaven serve' uses; only serve and init create one";

/**
 * Refuses a data folder that is not a site's, before a command other than `serve` or `init` opens
 * anything there: a wrong or missing `--data` used to become a new, empty site, reported
 * as such (issue 12). What the folder must hold depends on the setup:
 *   - SQLite (no --database-url): the database file, and the secret unless --secret is given;
 *   - PostgreSQL: the metadata is in the database, so the folder holds only the secret
 *     (unless --secret is given) and the blobs (unless --s3-bucket is given): it must
 *     exist when it holds either, and hold the secret when no --secret is given. With
 *     --secret and S3 it holds nothing, and need not exist.
 */
export async function checkSiteFolder(config: Config): Promise<void> {
  const dir = config.dataDir;
  const kind = await kindOf(dir);
  const needed = config.databaseUrl === null || config.secret === null || config.s3Bucket === null;
  if (kind === 'missing') {
    if (needed) throw new ConfigError(`no data folder at ${dir} ${WHERE}: ${ONLY_SERVE_AND_INIT}`);
    return;
  }
  if (kind !== 'folder') throw new ConfigError(`${dir} ${WHERE} is not a folder`);
  if (config.databaseUrl === null && (await kindOf(path.join(dir, SQLITE_FILE))) !== 'file') {
    throw new ConfigError(`${dir} ${WHERE} is not a filehaven data folder: it holds no ${SQLITE_FILE}; ${ONLY_SERVE_AND_INIT}`);
  }
  // On either engine: without it, opening the site would write a new secret beside a
  // database whose keys were sealed with another (a server run with --secret, say).
  if (config.secret === null && (await kindOf(path.join(dir, SECRET_FILE))) !== 'file') {
    throw new ConfigError(
      `${dir} ${WHERE} is not this site's data folder: it holds no ${SECRET_FILE}, and no --secret (FILEHAVEN_SECRET) is given; ${ONLY_SERVE_AND_INIT}`,
    );
  }
}

async function kindOf(file: string): Promise<'missing' | 'file' | 'folder' | 'other'> {
  try {
    const info = await stat(file);
    return info.isDirectory() ? 'folder' : info.isFile() ? 'file' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return 'missing';
    throw error;
  }
}
