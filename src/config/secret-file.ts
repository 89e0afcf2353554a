import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

/** The secret's file name inside the data folder. */
export const SECRET_FILE = 'secret';

/** The secret kept in `<data>/secret`, or null when there is no such file. */
export async function readSecretFile(dataDir: string): Promise<string | null> {
  try {
    return (await fs.readFile(path.join(dataDir, SECRET_FILE), 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * The server secret: FILEHAVEN_SECRET when given, else the one kept in `<data>/secret`,
 * generated on first use. Created with O_EXCL so two processes starting together agree.
 */
export async function loadOrCreateSecret(dataDir: string, given: string | null): Promise<string> {
  if (given !== null) return given;
  const kept = await readSecretFile(dataDir);
  if (kept !== null) return kept;
  const file = path.join(dataDir, SECRET_FILE);
  const secret = randomBytes(32).toString('base64url');
  try {
    await fs.writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return (await fs.readFile(file, 'utf8')).trim();
    throw error;
  }
}
