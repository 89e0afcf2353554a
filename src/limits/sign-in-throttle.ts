import { createHash } from 'node:crypto';
import { ApiError, errors } from '../domain/errors.js';
import { addressKey } from './client-address.js';
import type { KnownSignInAddresses } from './known-sign-in-addresses.js';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from './rate-limiter-classes.js';

export interface SignInThrottleOptions {
  /** Failed sign-ins allowed per minute, per client address and per login (API.md 8). */
  attemptsPerMinute: number;
  /**
   * The counters; in-memory by default. Any rate-limiter-flexible store (Redis,
   * PostgreSQL) shares them between processes.
   */
  byAddress?: RateLimiterAbstract;
  byLogin?: RateLimiterAbstract;
  /** Addresses exempt from the per-login limit for a login they signed in to before. */
  known: KnownSignInAddresses;
  /** Where failures that do not change the answer are reported. */
  report: (error: unknown, message: string) => void;
  /** Told of every attempt refused by a full counter. */
  refused: () => void;
}

/** A login as a counter key: case and surrounding blanks do not make a new login, length is bounded. */
const loginKey = (login: string) => createHash('sha256').update(login.trim().toLowerCase()).digest('hex');

/**
 * The brute-force limit on password checks (API.md 8: "POST /apikeys attempts per IP
 * and login, 10 a minute", errorWrongCredentials with 429), shared by POST /apikeys and
 * the web sign-in.
 *
 * Two counters: failures per client address, and failures per login from addresses
 * that never signed in to it. An address that has signed in to a login (in the last
 * 90 days) skips that login's counter: whoever guesses a login's password from
 * elsewhere fills the counter for everybody but its owner's usual places, so the
 * owner is not locked out (issue 7 item 4: a lock anyone could hand out). Guessing is
 * still bounded: from each address by its own counter, and from new addresses by the
 * login's. We chose this over growing delays, which an attacker can hand out just the
 * same and which hold connections open while they wait.
 */
export class SignInThrottle {
  private readonly byAddress: RateLimiterAbstract;
  private readonly byLogin: RateLimiterAbstract;
  private readonly known: KnownSignInAddresses;
  private readonly report: (error: unknown, message: string) => void;
  private readonly refused: () => void;

  constructor(options: SignInThrottleOptions) {
    const counter = (keyPrefix: string) => new RateLimiterMemory({ keyPrefix, points: options.attemptsPerMinute, duration: 60 });
    this.byAddress = options.byAddress ?? counter('sign-in-address');
    this.byLogin = options.byLogin ?? counter('sign-in-login');
    this.known = options.known;
    this.report = options.report;
    this.refused = options.refused;
  }

  /**
   * Runs `check` (the password check) as one sign-in attempt of `login` from `ip`.
   * The attempt takes its place on the counters before the password is looked at, so
   * parallel guesses cannot overtake the limit; once a counter is full every attempt it
   * governs is refused until its minute is over, the right password included (or the
   * limit would only slow an attacker down). Attempts that end in anything but
   * errorWrongCredentials give their place back: only failures count. A success makes
   * the address known to the login.
   */
  attempt<T>(ip: string, login: string, check: () => Promise<T>): Promise<T> {
    return this.counted(ip, login, false, check);
  }

  /**
   * Runs `check` (a second-factor code's check, after a right password) as one attempt of
   * `login` from `ip`. Unlike a password, a code always counts on the login's counter,
   * known address or not: the password step just made the address known, so whoever has
   * the password would otherwise get 5 codes from every address they own. Its owner may be
   * locked out of the code step for a minute then; that is the price of a stolen password.
   * A right code does not make the address known (the password did already).
   */
  attemptCode<T>(ip: string, login: string, check: () => Promise<T>): Promise<T> {
    return this.counted(ip, login, true, check);
  }

  private async counted<T>(ip: string, login: string, code: boolean, check: () => Promise<T>): Promise<T> {
    const address = addressKey(ip);
    const account = loginKey(login);
    // The address first: a refused address never reaches the login counter, so a flood of
    // made-up logins cannot fill it.
    await takeAttempt(this.byAddress.consume(address), this.refused);
    let countsForLogin = false;
    try {
      countsForLogin = code || !(await this.known.isKnown(account, ip));
      if (countsForLogin) await takeAttempt(this.byLogin.consume(account), this.refused);
    } catch (error) {
      await this.byAddress.reward(address);
      throw error;
    }
    const giveBack = () => Promise.all([this.byAddress.reward(address), countsForLogin ? this.byLogin.reward(account) : undefined]);
    let result: T;
    try {
      result = await check();
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'errorWrongCredentials')) await giveBack();
      throw error;
    }
    await giveBack();
    if (code) return result;
    // The sign-in succeeded; failing to note the address only means the next one counts.
    await this.known.remember(account, ip).catch((error: unknown) => this.report(error, 'recording a sign-in address failed'));
    return result;
  }
}

/**
 * Turns a counter's refusal into errorWrongCredentials with 429. A store failure is
 * passed on as it is: failing closed, rather than letting guesses through. (A Redis
 * store never fails here: it counts in memory while Redis is away, limits.ts.)
 */
async function takeAttempt(consumed: Promise<RateLimiterRes>, refused: () => void): Promise<void> {
  try {
    await consumed;
  } catch (refusal) {
    if (refusal instanceof RateLimiterRes) {
      refused();
      throw errors.signInThrottled(refusal.msBeforeNext / 1000);
    }
    throw refusal;
  }
}
