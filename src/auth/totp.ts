import { createRequire } from 'node:module';

// otpauth is loaded with the first second-factor step, not at the start: most requests
// never need it (idle memory, issue 28). Its CommonJS build is required, so
// these functions stay synchronous.
const require = createRequire(import.meta.url);
let library: typeof import('otpauth') | undefined;
const otpauth = () => (library ??= require('otpauth') as typeof import('otpauth'));

/**
 * RFC 6238 with the parameters every authenticator app takes: HMAC-SHA-1, 6 digits, 30 s.
 * (Apps such as Google Authenticator ignore other values in the URI and show wrong codes.)
 */
const PARAMETERS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;

/** Codes one step older or newer than the server's clock are taken: a phone a little off still works. */
const WINDOW = 1;

/** A new random secret: 160 bits (RFC 4226 section 4 recommends it), as base32. */
export function newTotpSecret(): string {
  const { Secret } = otpauth();
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://` URI an authenticator app scans: issuer and label tell the person which entry it is. */
export function totpUri(secretBase32: string, issuer: string, label: string): string {
  const { Secret, TOTP } = otpauth();
  return new TOTP({ ...PARAMETERS, issuer, label, secret: Secret.fromBase32(secretBase32) }).toString();
}

/** Whether a typed code looks like a TOTP code (6 digits, spaces allowed), and the digits. */
export function totpDigits(typed: string): string | null {
  const digits = typed.replace(/\s+/g, '');
  return /^\d{6}$/.test(digits) ? digits : null;
}

/**
 * The RFC 6238 time step a code belongs to, within one step of `now`; null for a wrong
 * code. otpauth compares in constant time. The caller still has to spend the step once.
 */
export function totpStep(secretBase32: string, digits: string, now: number): number | null {
  const { Secret, TOTP } = otpauth();
  const totp = new TOTP({ ...PARAMETERS, secret: Secret.fromBase32(secretBase32) });
  const delta = totp.validate({ token: digits, timestamp: now, window: WINDOW });
  return delta === null ? null : totp.counter({ timestamp: now }) + delta;
}
