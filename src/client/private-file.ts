import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes a file only its owner may read, atomically: mode 0600 (its folder 0700 when made
 * here), written to a temp file beside it, synced, then renamed over the old one. A crash
 * (even `kill -9`) leaves the old file or the new one, never half of either. The CLI's
 * login (an API key) and the tus uploads' URLs (src/client/upload-url-storage.ts) are
 * kept this way.
 */
export async function writePrivateFile(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    // The mode of open() is cut by the umask, never widened; chmod says it outright.
    await handle.chmod(0o600);
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await chmod(file, 0o600);
}
