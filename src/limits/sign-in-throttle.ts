import { createHash } from 'node:crypto';
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError, errors } from '../domain/errors.js';
import { addressKey } from './client-address.js';

export interface SignInThrottleOptions {
  /** Failed sign-ins allowed per minute, per client address and per login (API.md 8). */
  attemptsPerMinute: number;
  /**
   * The counters; in-memory by default. Any rate-limiter-flexible store (Redis,
   * PostgreSQL) shares them between processes.
   */
  byAddress?: RateLimiterAbstract;
  byLogin?: RateLimiterAbstract;
}

/** A login as a counter key: case and surrounding blanks do not make a new login, length is bounded. */
const loginKey = (login: string) => createHash('sha256').update(login.trim().toLowerCase()).digest('hex');

/**
 * The brute-force limit on password checks (API.md 8: "POST /apikeys attempts per IP
 * and login, 10 a minute", errorWrongCredentials with 429). Used by POST /apikeys and
 * meant for every other place that checks a password (web sign-in).
 */
export class SignInThrottle {
  private readonly byAddress: RateLimiterAbstract;
  private readonly byLogin: RateLimiterAbstract;

  constructor(options: SignInThrottleOptions) {
    const counter = (keyPrefix: string) => new RateLimiterMemory({ keyPrefix, points: options.attemptsPerMinute, duration: 60 });
    this.byAddress = options.byAddress ?? counter('sign-in-address');
    this.byLogin = options.byLogin ?? counter('sign-in-login');
  }

  /**
   * Runs `check` (the password check) as one sign-in attempt of `login` from `ip`.
   * The attempt takes its place on both counters before the password is looked at, so
   * parallel guesses cannot overtake the limit; once either counter is full every
   * attempt is refused until its minute is over, the right password included (or the
   * limit would only slow an attacker down). Attempts that end in anything but
   * errorWrongCredentials give their place back: only failures count.
   */
  async attempt<T>(ip: string, login: string, check: () => Promise<T>): Promise<T> {
    const address = addressKey(ip);
    const account = loginKey(login);
    // The address first: a refused address never reaches the login counter, so a flood of
    // made-up logins cannot fill it.
    await takeAttempt(this.byAddress.consume(address));
    try {
      await takeAttempt(this.byLogin.consume(account));
    } catch (error) {
      await this.byAddress.reward(address);
      throw error;
    }
    const giveBack = () => Promise.all([this.byAddress.reward(address), this.byLogin.reward(account)]);
    let result: T;
    try {
      result = await check();
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'errorWrongCredentials')) await giveBack();
      throw error;
    }
    await giveBack();
    return result;
  }
}

/**
 * Turns a counter's refusal into errorWrongCredentials with 429. A store failure is
 * passed on as it is: failing closed, rather than letting guesses through.
 */
async function takeAttempt(consumed: Promise<RateLimiterRes>): Promise<void> {
  try {
    await consumed;
  } catch (refusal) {
    if (refusal instanceof RateLimiterRes) throw errors.signInThrottled(refusal.msBeforeNext / 1000);
    throw refusal;
  }
}
