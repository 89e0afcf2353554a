import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { rememberRecent } from '../domain/remember-recent.js';

/** The server setting (`server_settings.name`) that keeps ServerSecrets.fingerprint(). */
export const SECRET_FINGERPRINT_SETTING = 'secret_fingerprint';

/**
 * Everything derived from the server secret. Keys are split with HKDF so that the
 * API-key lookup hash, the API-key box and link signatures never share a key.
 */
export class ServerSecrets {
  private readonly lookupKey: Buffer;
  private readonly boxKey: Buffer;
  private readonly signKey: Buffer;
  private readonly csrfKey: Buffer;
  private readonly shareRefRoot: Buffer;
  private readonly factorBoxKey: Buffer;
  private readonly recoveryCodeKey: Buffer;

  constructor(secret: string) {
    const ikm = Buffer.from(secret, 'utf8');
    const derive = (info: string) => Buffer.from(hkdfSync('sha256', ikm, 'filehaven', info, 32));
    this.lookupKey = derive('apikey-lookup');
    this.boxKey = derive('apikey-box');
    this.signKey = derive('link-signature');
    this.csrfKey = derive('csrf-token');
    this.shareRefRoot = derive('share-ref');
    this.factorBoxKey = derive('factor-box');
    this.recoveryCodeKey = derive('recovery-code');
  }

  /**
   * Keyed hash of an API key: what the database indexes, useless without the secret.
   * Remembered for recent keys: this runs on every API request. (The keys it holds are
   * the ones requests carry through this process anyway.)
   */
  readonly apiKeyLookup: (apiKey: string) => string = rememberRecent((apiKey: string) => createHmac('sha256', this.lookupKey).update(apiKey).digest('hex'));

  /** Encrypts an API key (AES-256-GCM) so POST /apikeys can return the same key again. */
  sealApiKey(apiKey: string): string {
    return seal(this.boxKey, apiKey);
  }

  /** Decrypts a sealed API key; null if it was sealed under another secret or tampered with. */
  openApiKey(sealed: string): string | null {
    return open(this.boxKey, sealed);
  }

  /** Encrypts a second factor's secret (a TOTP key) for the database, under its own key. */
  sealFactorSecret(secret: string): string {
    return seal(this.factorBoxKey, secret);
  }

  /** Decrypts a sealed factor secret; null if sealed under another secret or tampered with. */
  openFactorSecret(sealed: string): string | null {
    return open(this.factorBoxKey, sealed);
  }

  /**
   * What the database keeps of a recovery code: a keyed hash over the account and the code
   * (hex). The codes are random and long, so a keyed hash is as good as a slow one and lets
   * a code be found by one lookup.
   */
  recoveryCodeHash(accountId: number, code: string): string {
    return createHmac('sha256', this.recoveryCodeKey).update(`${accountId}\n${code}`).digest('hex');
  }

  /** HMAC signature (base64url, 192 bits) of a message, for signed links. */
  sign(message: string): string {
    return createHmac('sha256', this.signKey).update(message).digest('base64url').slice(0, 32);
  }

  /**
   * The form token (base64url, 256 bits) bound to a session's or pre-session's secret:
   * whoever can read or plant the secret's cookie still cannot make a token without the
   * server secret.
   */
  csrfToken(purpose: 'session' | 'pre-session', secret: string): string {
    return createHmac('sha256', this.csrfKey).update(`${purpose}\n${secret}`).digest('base64url');
  }

  /**
   * The AES-256 key of one share's references to the files and folders inside it
   * (sharing/share-refs.ts): an HMAC of the share id, so no two shares share a key.
   */
  shareRefKey(shareId: string): Buffer {
    return createHmac('sha256', this.shareRefRoot).update(shareId).digest();
  }

  /**
   * What the database keeps to recognise this secret (server setting
   * `secret_fingerprint`): a start, a backup or a restore with another secret is refused.
   */
  fingerprint(): string {
    return this.sign('secret-fingerprint');
  }

  /** Constant-time check of a signature made by sign(). */
  verify(message: string, signature: string): boolean {
    return constantTimeEqual(this.sign(message), signature);
  }
}

/** AES-256-GCM: IV, tag and ciphertext, base64. */
function seal(key: Buffer, text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

/** Opens what seal() made with the same key; null otherwise. */
function open(key: Buffer, sealed: string): string | null {
  try {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12), { authTagLength: 16 });
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** Compares two strings without leaking where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
