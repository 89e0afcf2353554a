import { randomBytes, randomInt, randomUUID } from 'node:crypto';

/** Where ids and secrets come from; injected so tests can be deterministic. */
export interface IdSource {
  /** A new file id: 10 characters of A-Z0-9 (API.md section 1). */
  fileId(): string;
  /** A new folder id, same form as file ids. */
  folderId(): string;
  /** A new API key: at least 128 random bits, alphanumeric so regex and sed clients cope. */
  apiKey(): string;
  /** A new delete-link secret (128 bits, hex). */
  deleteSecret(): string;
  /** A new id for a server process, naming the reservations it holds (a random UUID). */
  processId(): string;
  /**
   * A new share or upload request id: the link itself is the key, so it is unguessable,
   * 22 characters of A-Za-z0-9 (about 131 bits), and URL- and regex-safe like API keys.
   */
  linkId(): string;
}

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniform characters from a CSPRNG (randomInt rejects modulo bias). */
function randomString(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** Ids are upper case, path words lower case, so an id can never equal a fixed path word. */
export const ID_PATTERN = /^[A-Z0-9]{10}$/;

export const cryptoIds: IdSource = {
  fileId: () => randomString(ID_ALPHABET, 10),
  folderId: () => randomString(ID_ALPHABET, 10),
  // 32 characters of 62 symbols: about 190 bits.
  apiKey: () => randomString(KEY_ALPHABET, 32),
  deleteSecret: () => randomBytes(16).toString('hex'),
  processId: () => randomUUID(),
  linkId: () => randomString(KEY_ALPHABET, 22),
};

/** What a share or upload request id looks like: anything else is not looked up at all. */
export const LINK_ID_PATTERN = /^[A-Za-z0-9]{22}$/;

/** A clock; injected so tests can move time without touching the database. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();
