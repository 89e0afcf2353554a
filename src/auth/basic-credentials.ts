import { createHash, randomBytes } from 'node:crypto';
import type { MetadataStore } from '../db/repositories/repositories.js';
import { ApiError, errors } from '../domain/errors.js';
import type { Clock } from '../domain/ids.js';
import type { Account } from '../domain/types.js';
import type { SignInThrottle } from '../limits/sign-in-throttle.js';
import { constantTimeEqual } from '../security/secrets.js';
import type { AccountsService } from '../services/accounts-service.js';

export interface BasicCredentialsDeps {
  store: MetadataStore;
  accounts: AccountsService;
  throttle: SignInThrottle;
  clock: Clock;
  /** The site's sign-in rules that decide whether a password alone is enough (issue 26). */
  rules: { oidcOnly: boolean; secondFactorRequired: 'none' | 'operators' | 'everyone' };
}

/** How long a checked password is taken again without its slow hash. */
const REMEMBER_MS = 5 * 60_000;
/** Checked passwords remembered at most (the oldest go first). */
const REMEMBER_MAX = 10_000;

/**
 * Login and secret from HTTP Basic (WebDAV, issue 27): the secret is the account's API key
 * (an app password: what accounts with a second factor or single sign-on use) or its
 * password, where a password alone may sign in (AccountsService.passwordKeyRefusal).
 *
 * WebDAV clients send the credentials with every request, and a password check is a slow
 * hash by design; so a password that checked out is remembered for five minutes, under a
 * keyed hash of login and password, together with the password hash it matched: a changed
 * password, a disabled account or a new sign-in rule takes effect on the next request.
 * Failures count on the sign-in throttle like the sign-in page's (API.md 8).
 */
export class BasicCredentials {
  private readonly remembered = new Map<string, { accountId: number; passwordHash: string; until: number }>();
  private readonly salt = randomBytes(32);

  constructor(private readonly deps: BasicCredentialsDeps) {}

  /** The account, or errorWrongCredentials (401; 429 when the throttle is full). */
  async verify(ip: string, login: string, secret: string): Promise<Account> {
    if (login === '' || secret === '' || login.length > 256 || secret.length > 1024) throw errors.wrongCredentials();
    const byKey = await this.deps.accounts.accountForApiKey(secret);
    if (byKey && constantTimeEqual(byKey.login.toLowerCase(), login.toLowerCase())) return byKey;
    const found = await this.deps.store.accounts.credentials(login);
    const memo = this.memoKey(login, secret);
    const known = this.remembered.get(memo);
    if (known && found && known.until > this.deps.clock() && known.accountId === found.account.id && known.passwordHash === found.passwordHash) {
      if (found.account.disabled || (await this.refusal(found.account)) !== null) throw errors.wrongCredentials();
      return found.account;
    }
    return this.deps.throttle.attempt(ip, login, async () => {
      // A key that named another login, and a wrong password, fail alike.
      const account = await this.deps.accounts.authenticate(login, secret);
      const why = await this.refusal(account);
      if (why !== null) throw new ApiError('errorWrongCredentials', 401, `${why}; use an API key from your profile as the password`);
      if (found) this.remember(memo, { accountId: account.id, passwordHash: found.passwordHash, until: this.deps.clock() + REMEMBER_MS });
      return account;
    });
  }

  private refusal(account: Account): Promise<string | null> {
    return this.deps.accounts.passwordKeyRefusal(account, this.deps.rules.oidcOnly, this.deps.rules.secondFactorRequired);
  }

  private memoKey(login: string, secret: string): string {
    return createHash('sha256').update(this.salt).update(login.toLowerCase()).update('\0').update(secret).digest('hex');
  }

  private remember(key: string, entry: { accountId: number; passwordHash: string; until: number }): void {
    if (this.remembered.size >= REMEMBER_MAX) {
      const oldest = this.remembered.keys().next().value;
      if (oldest !== undefined) this.remembered.delete(oldest);
    }
    this.remembered.set(key, entry);
  }
}
