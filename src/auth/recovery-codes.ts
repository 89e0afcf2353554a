import { randomBytes } from 'node:crypto';

/** How many recovery codes a confirmation (or a renewal) hands out. */
export const RECOVERY_CODE_COUNT = 10;

// RFC 4648 base32: no 0/1/8/9, so nothing reads as O, I, B or g; case does not matter.
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * A new recovery code: 10 random base32 characters (50 bits) shown as `xxxxx-xxxxx`.
 * Guessing is bounded by the sign-in throttle, and each code works once.
 */
export function newRecoveryCode(): string {
  // 256 is a multiple of 32, so `byte % 32` is uniform.
  const chars = [...randomBytes(10)].map((byte) => ALPHABET[byte % 32]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/**
 * A recovery code as typed (any case, with or without the dash or spaces) in the form it
 * was hashed in; null when it cannot be one.
 */
export function canonicalRecoveryCode(typed: string): string | null {
  const chars = typed.replace(/[\s-]+/g, '').toUpperCase();
  if (!/^[A-Z2-7]{10}$/.test(chars)) return null;
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}
