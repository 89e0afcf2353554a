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
 * generated on first use. Created with O_EXCL and mode 0600 (owner only; the umask can only
 * narrow it) so two processes starting together agree. A kept file that group or others
 * may read is used, but `warn` is told once, with the fix (issue 14).
 */
export async function loadOrCreateSecret(dataDir: string, given: string | null, warn: (message: string) => void = () => {}): Promise<string> {
  if (given !== null) return given;
  const file = path.join(dataDir, SECRET_FILE);
  const kept = await readSecretFile(dataDir);
  if (kept !== null) {
    const loose = await looseMode(file);
    if (loose !== null) warn(`warning: the server secret ${file} is open to group or others (mode ${loose}); make it owner-only: chmod 600 ${file}`);
    return kept;
  }
  const secret = randomBytes(32).toString('base64url');
  try {
    await fs.writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return (await fs.readFile(file, 'utf8')).trim();
    throw error;
  }
}

/** The file's permission bits in octal when group or others have any of them, else null. */
async function looseMode(file: string): Promise<string | null> {
  // Windows reports every file as 0666: there the bits say nothing about who may read it.
  if (process.platform === 'win32') return null;
  const mode = (await fs.stat(file)).mode & 0o777;
  return mode & 0o077 ? `0${mode.toString(8).padStart(3, '0')}` : null;
}
