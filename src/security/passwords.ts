import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

// scrypt parameters: N=2^15, r=8, p=1 costs ~32 MiB and tens of milliseconds, the
// interactive-login setting recommended by the scrypt paper and OWASP.
const PARAMS = { N: 1 << 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 128 * params.N * params.r * 2 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Hashes a password as `scrypt$N$r$p$salt$hash` (base64), self-describing so parameters can grow. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Checks a password against a stored hash in constant time; a malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, 'base64');
  const expected = Buffer.from(parts[5]!, 'base64');
  // Bounds keep a crafted stored hash from costing gigabytes of memory per check.
  const sane = (value: number, max: number) => Number.isInteger(value) && value >= 1 && value <= max;
  if (!sane(N, 1 << 20) || !sane(r, 32) || !sane(p, 16) || expected.length !== KEY_LENGTH) {
    return false;
  }
  let actual: Buffer;
  try {
    actual = await derive(password, salt, { N, r, p });
  } catch {
    // Parameters scrypt refuses (N not a power of two, r = 0, ...): a malformed hash.
    return false;
  }
  return timingSafeEqual(actual, expected);
}

/** A hash of a random password, used to burn the same time for unknown logins. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
}
