import { readFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { writePrivateFile } from '../../client/private-file.js';

/** What `filehaven login` stores: the server and the key of one account. */
export interface StoredLogin {
  /** {base_url} of the server. */
  server: string;
  /** The API key; never printed. */
  key: string;
  /** The login it was made for, to say who is signed in. */
  login?: string;
}

/** `$XDG_CONFIG_HOME/filehaven/client.json`, `~/.config/filehaven/client.json` without it (XDG Base Directory). */
export function clientConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(homedir(), '.config');
  return path.join(base, 'filehaven', 'client.json');
}

/** The stored login, or null when there is none; a damaged file is an error that names it. */
export async function readStoredLogin(file = clientConfigPath()): Promise<StoredLogin | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON; run filehaven login again`);
  }
  const { server, key, login } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof server !== 'string' || typeof key !== 'string') throw new Error(`${file} lacks "server" or "key"; run filehaven login again`);
  return { server, key, ...(typeof login === 'string' ? { login } : {}) };
}

/**
 * Stores the login atomically with mode 0600 (its folder 0700 when made here): a crash
 * leaves the old file or the new one, and no other user can ever read the key.
 */
export async function writeStoredLogin(login: StoredLogin, file = clientConfigPath()): Promise<void> {
  await writePrivateFile(file, `${JSON.stringify(login, null, 2)}\n`);
}

/**
 * Where tus uploads keep their upload URLs between runs (docs/client.md "Uploads resume"):
 * `uploads.json` beside the login, so `kill -9` and a rerun continue where they were.
 */
export function uploadStatePath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(path.dirname(clientConfigPath(env)), 'uploads.json');
}

/** Removes the stored login; false when there was none. */
export async function removeStoredLogin(file = clientConfigPath()): Promise<boolean> {
  try {
    await rm(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
