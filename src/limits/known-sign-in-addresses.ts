import type { SignInAddressesRepository } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import { addressKey } from './client-address.js';

/** How long a successful sign-in keeps its address known: the longest a web session lives (gc prunes older rows). */
export const KNOWN_ADDRESS_MS = 90 * 24 * 3_600_000;

/**
 * The addresses (IPv6 by /64) that have signed in to a login in the last 90 days. The
 * per-login sign-in limit does not apply to them, so an attacker guessing one login's
 * password from elsewhere cannot lock its owner out of the places they use (issue 7,
 * item 4). Rows are keyed by a keyed hash of login and address: the table reveals
 * neither.
 */
export class KnownSignInAddresses {
  constructor(
    private readonly deps: {
      repository: SignInAddressesRepository;
      clock: Clock;
      /** A keyed hash (HMAC with the server secret) of a text. */
      hash: (text: string) => string;
    },
  ) {}

  /** Whether `ip` signed in to `loginKey` within the last 90 days. */
  async isKnown(loginKey: string, ip: string | undefined): Promise<boolean> {
    const last = await this.deps.repository.lastSuccess(this.id(loginKey, ip));
    return last !== null && last > this.deps.clock() - KNOWN_ADDRESS_MS;
  }

  /** Records a successful sign-in of `loginKey` from `ip`. */
  async remember(loginKey: string, ip: string | undefined): Promise<void> {
    await this.deps.repository.recordSuccess(this.id(loginKey, ip), this.deps.clock());
  }

  private id(loginKey: string, ip: string | undefined): string {
    return this.deps.hash(`sign-in-address\n${loginKey}\n${addressKey(ip)}`);
  }
}
