import { randomBytes } from 'node:crypto';
import type { MetadataStore, Repositories } from '../db/repositories/repositories.js';
import { DuplicateError } from '../db/repositories/repositories.js';
import { MAX_PREMIUM_DAYS, MAX_TRAFFIC_BYTES, MAX_TRAFFIC_TEXT } from '../domain/account-bounds.js';
import { errors, InputError } from '../domain/errors.js';
import type { Clock, IdSource } from '../domain/ids.js';
import type { Account } from '../domain/types.js';
import { premiumState } from '../domain/types.js';
import { decoyHash, hashPassword, verifyPassword } from '../security/passwords.js';
import type { ServerSecrets } from '../security/secrets.js';

const DAY_MS = 86_400_000;

/**
 * The stored password hash of an account made by single sign-on (issue 26): not a scrypt
 * hash, so verifyPassword never accepts any password for it (security/passwords.ts).
 */
export const NO_PASSWORD_HASH = '!no-password';

export interface CreateAccountInput {
  login: string;
  password: string;
  name?: string;
  email?: string;
  premiumDays?: number;
  trafficBytes?: number;
  isOperator?: boolean;
}

export interface AccountsServiceDeps {
  store: MetadataStore;
  secrets: ServerSecrets;
  ids: IdSource;
  clock: Clock;
}

/** Accounts, credentials, API keys and premium (API.md section 5). */
export class AccountsService {
  constructor(private readonly deps: AccountsServiceDeps) {}

  /** Creates an account; InputError for a bad or taken login or a weak password. */
  async create(input: CreateAccountInput): Promise<Account> {
    const login = input.login.trim();
    if (!/^[A-Za-z0-9._@+-]{1,64}$/.test(login)) {
      throw new InputError('login must be 1-64 characters of letters, digits and . _ @ + -');
    }
    checkPassword(input.password);
    const now = this.deps.clock();
    const days = input.premiumDays ?? 0;
    if (!Number.isFinite(days) || days < 0 || days > MAX_PREMIUM_DAYS) throw new InputError(`premium days must be a number from 0 to ${MAX_PREMIUM_DAYS}`);
    checkTraffic(input.trafficBytes ?? 0);
    try {
      return await this.deps.store.accounts.create({
        login,
        passwordHash: await hashPassword(input.password),
        name: (input.name ?? '').trim(),
        email: (input.email ?? '').trim(),
        premiumStart: days > 0 ? now : null,
        premiumEnd: days > 0 ? Math.round(now + days * DAY_MS) : null,
        trafficLeft: input.trafficBytes ?? 0,
        isOperator: input.isOperator ?? false,
        createdAt: now,
      });
    } catch (error) {
      if (error instanceof DuplicateError) throw new InputError(`login "${login}" is already taken`);
      throw error;
    }
  }

  /**
   * Creates an account that signs in through single sign-on only (issue 26): no password
   * works for it until one is set. `alongside` runs in the same transaction (linking the
   * identity), so an account never exists without the way in it was made for. DuplicateError
   * when the login is taken or `alongside` hits a unique constraint; nothing is kept then.
   */
  createWithoutPassword(
    input: { login: string; name: string; email: string },
    alongside: (repos: Repositories, account: Account) => Promise<void>,
  ): Promise<Account> {
    return this.deps.store.transaction(async (repos) => {
      const account = await repos.accounts.create({
        login: input.login,
        passwordHash: NO_PASSWORD_HASH,
        name: input.name,
        email: input.email,
        premiumStart: null,
        premiumEnd: null,
        trafficLeft: 0,
        isOperator: false,
        createdAt: this.deps.clock(),
      });
      await alongside(repos, account);
      return account;
    });
  }

  /** Whether a password signs the account in (false for one made by single sign-on). */
  async hasPassword(account: Account): Promise<boolean> {
    const found = await this.deps.store.accounts.credentials(account.login);
    return found !== null && found.passwordHash !== NO_PASSWORD_HASH;
  }

  /** Whether the site has no account yet: its first start creates the operator. */
  async hasNoAccounts(): Promise<boolean> {
    return (await this.deps.store.accounts.count()) === 0;
  }

  /**
   * Creates the operator account `admin` of a fresh install and returns its password, to
   * be shown once; null when another process created it first.
   */
  async createFirstOperator(): Promise<{ login: string; password: string } | null> {
    const password = randomBytes(12).toString('base64url');
    try {
      await this.create({ login: 'admin', password, name: 'Operator', isOperator: true });
    } catch (error) {
      // Another process bootstrapped at the same moment.
      if (error instanceof InputError) return null;
      throw error;
    }
    return { login: 'admin', password };
  }

  /** The account for a login and password; errorWrongCredentials otherwise (same timing). */
  async authenticate(login: string, password: string): Promise<Account> {
    const found = await this.deps.store.accounts.credentials(login);
    if (!found) {
      // Spend the same time as a real check so logins cannot be probed by timing.
      await verifyPassword(password, await decoyHash());
      throw errors.wrongCredentials();
    }
    if (found.passwordHash === NO_PASSWORD_HASH) {
      // Single sign-on only: the same time as a real check, then the same refusal.
      await verifyPassword(password, await decoyHash());
      throw errors.wrongCredentials();
    }
    const ok = await verifyPassword(password, found.passwordHash);
    if (!ok || found.account.disabled) throw errors.wrongCredentials();
    return found.account;
  }

  /**
   * Why a login and password alone may not hand out this account's API key (POST /apikeys,
   * issue 26), or null when they may. A password is one factor: an account that signs in
   * with a second one (TOTP) or through its organisation (a linked OIDC identity), or any
   * non-operator account on an `--oidc-only` site, gets its key from its profile page
   * instead. Passkeys do not count: they sign in without the password, which keeps working.
   * Nor does a password alone give a key when `--second-factor-required` (`secondFactorRequired`)
   * covers the account and it has no confirmed TOTP (a passkey-only account): the rule asks
   * for more than a password, and a passkey is no second step to a password.
   */
  async passwordKeyRefusal(account: Account, oidcOnly: boolean, secondFactorRequired: 'none' | 'operators' | 'everyone'): Promise<string | null> {
    const methods = await this.deps.store.accounts.signInMethods(account.id);
    if (methods.totp) return 'This account signs in with a second factor: a password alone does not give out its API key';
    if (secondFactorRequired === 'everyone' || (secondFactorRequired === 'operators' && account.isOperator))
      return 'This site requires a second factor for this account: a password alone does not give out its API key';
    if (methods.identities > 0) return 'This account signs in through single sign-on: a password alone does not give out its API key';
    if (oidcOnly && !account.isOperator) return 'This site signs in through single sign-on: a password alone does not give out an API key';
    return null;
  }

  /**
   * The account's API key, created on first use and returned unchanged afterwards.
   * With `explicitCreate`, an existing key answers errorApiKeyAlreadyCreated.
   */
  async apiKeyFor(account: Account, explicitCreate = false): Promise<string> {
    const sealed = await this.deps.store.accounts.sealedApiKey(account.id);
    if (sealed !== null) {
      if (explicitCreate) throw errors.apiKeyAlreadyCreated();
      const key = this.deps.secrets.openApiKey(sealed);
      // The secret fingerprint check at start makes this a damaged row, not a changed
      // secret: never rotate the key silently under a client that still holds it.
      if (key === null) throw new Error(`the sealed API key of account ${account.id} cannot be opened`);
      return key;
    }
    const key = this.deps.ids.apiKey();
    const stored = await this.deps.store.accounts.setApiKeyIfAbsent(account.id, this.deps.secrets.apiKeyLookup(key), this.deps.secrets.sealApiKey(key));
    // A concurrent request created one first: return that one, so both callers agree.
    return stored ? key : this.apiKeyFor(account);
  }

  /** Replaces the API key; the old one stops working at once. */
  async regenerateApiKey(accountId: number): Promise<string> {
    const key = this.deps.ids.apiKey();
    await this.deps.store.accounts.setApiKey(accountId, this.deps.secrets.apiKeyLookup(key), this.deps.secrets.sealApiKey(key));
    return key;
  }

  /**
   * The account with this id if it exists and is enabled, else null. Anything that keeps
   * an account id between requests (web sessions) calls this on every request, so that
   * `accounts disable` takes effect at once, as it does for API keys.
   */
  async activeAccount(id: number): Promise<Account | null> {
    const account = await this.deps.store.accounts.byId(id);
    return account && !account.disabled ? account : null;
  }

  /** The enabled account owning an API key, or null. */
  async accountForApiKey(apiKey: string): Promise<Account | null> {
    if (apiKey.length < 16 || apiKey.length > 256) return null;
    const account = await this.deps.store.accounts.byApiKeyHash(this.deps.secrets.apiKeyLookup(apiKey));
    return account && !account.disabled ? account : null;
  }

  /** Whether the account's premium is active now. */
  isPremium(account: Account): boolean {
    return premiumState(account, this.deps.clock()) === 'Active';
  }

  /**
   * Changes premium by `days` and adds `trafficBytes` to the traffic left. Positive days
   * extend an active period from its end, else start a new one now; negative days shorten
   * an active period, ending it now when they reach past now. The period never ends more
   * than MAX_PREMIUM_DAYS from now, and the traffic never exceeds MAX_TRAFFIC_BYTES.
   */
  async extendPremium(login: string, days: number, trafficBytes: number): Promise<Account> {
    if (!Number.isFinite(days) || Math.abs(days) > MAX_PREMIUM_DAYS)
      throw new InputError(`days must be a number from -${MAX_PREMIUM_DAYS} to ${MAX_PREMIUM_DAYS}`);
    checkTraffic(trafficBytes);
    const { id } = await this.byLoginOrFail(login);
    const now = this.deps.clock();
    // The period is read and written under the account's premium lock: two changes at
    // once (the CLI and the console) both count. Traffic is added in SQL, not as
    // read-then-write: a download running in the server may reserve or refund meanwhile.
    await this.deps.store.transaction(async (repos) => {
      await repos.locks.premium(id);
      const account = (await repos.accounts.byId(id))!;
      const active = premiumState(account, now) === 'Active' && account.premiumEnd !== null;
      let { premiumStart: start, premiumEnd: end } = account;
      if (days > 0) {
        if (active) {
          end = Math.round(end! + days * DAY_MS);
        } else {
          start = now;
          end = Math.round(now + days * DAY_MS);
        }
        if (end - now > MAX_PREMIUM_DAYS * DAY_MS) {
          throw new InputError(`premium of "${account.login}" would end more than ${MAX_PREMIUM_DAYS} days from now; give fewer days`);
        }
      } else if (days < 0) {
        if (!active) throw new InputError(`premium of "${account.login}" is not active: there is nothing to shorten`);
        end = Math.max(now, Math.round(end! + days * DAY_MS));
      }
      await repos.accounts.setPremiumPeriod(id, start, end);
      await addTrafficWithin(repos, account, trafficBytes);
    });
    return (await this.deps.store.accounts.byId(id))!;
  }

  /**
   * Ends an active premium period now (its start is kept, so the account reads Expired)
   * and adds `trafficBytes`, in one step; `ended` is false when premium was not active.
   */
  async endPremium(login: string, trafficBytes = 0): Promise<{ account: Account; ended: boolean }> {
    checkTraffic(trafficBytes);
    const { id } = await this.byLoginOrFail(login);
    const now = this.deps.clock();
    let ended = false;
    await this.deps.store.transaction(async (repos) => {
      await repos.locks.premium(id);
      const account = (await repos.accounts.byId(id))!;
      if (premiumState(account, now) === 'Active') {
        await repos.accounts.setPremiumPeriod(id, account.premiumStart, now);
        ended = true;
      }
      await addTrafficWithin(repos, account, trafficBytes);
    });
    return { account: (await this.deps.store.accounts.byId(id))!, ended };
  }

  /** The account with this login; InputError when there is none. */
  async byLoginOrFail(login: string): Promise<Account> {
    const account = await this.deps.store.accounts.byLogin(login);
    if (!account) throw new InputError(`no account with login "${login}"`);
    return account;
  }

  /** All accounts. */
  list(): Promise<Account[]> {
    return this.deps.store.accounts.list();
  }

  /**
   * Operator: disables or enables an account. A disabled account cannot get or use an
   * API key (accountForApiKey, authenticate), nor a session (activeAccount), nor direct links.
   */
  async setDisabled(login: string, disabled: boolean): Promise<{ before: Account; after: Account }> {
    const before = await this.byLoginOrFail(login);
    await this.deps.store.accounts.setDisabled(before.id, disabled);
    return { before, after: { ...before, disabled } };
  }

  /**
   * Operator: replaces the password; the old one stops working and so do the account's web
   * sessions (whoever signed in with it is signed out). The API key stays.
   */
  async setPassword(login: string, password: string): Promise<Account> {
    checkPassword(password);
    const account = await this.byLoginOrFail(login);
    await this.deps.store.accounts.setPasswordHash(account.id, await hashPassword(password));
    await this.deps.store.sessions.removeForAccount(account.id);
    return account;
  }

  /**
   * The account itself (the profile's form): replaces its password once the current one
   * is checked (errorWrongCredentials, with the timing of a sign-in, otherwise). As with
   * setPassword, every web session of the account ends: whoever signed in with the old
   * password is signed out; the caller starts a fresh session for the browser that asked.
   * The API key stays.
   */
  async changePassword(account: Account, current: string, next: string): Promise<void> {
    checkPassword(next);
    const checked = await this.authenticate(account.login, current);
    if (checked.id !== account.id) throw errors.wrongCredentials();
    await this.deps.store.accounts.setPasswordHash(checked.id, await hashPassword(next));
    await this.deps.store.sessions.removeForAccount(checked.id);
  }

  /** Operator: sets the balance to `cents` (>= 0); returns the account before and after. */
  async setBalance(login: string, cents: number): Promise<{ before: Account; after: Account }> {
    if (!Number.isSafeInteger(cents) || cents < 0) throw new InputError('the balance must be an amount >= 0.00');
    const before = await this.byLoginOrFail(login);
    await this.deps.store.accounts.setBalance(before.id, cents);
    return { before, after: { ...before, balanceCents: cents } };
  }

  /** Operator: adds `cents` (may be negative) to the balance; refuses to go below zero. */
  async addBalance(login: string, cents: number): Promise<{ before: Account; after: Account }> {
    if (!Number.isSafeInteger(cents)) throw new InputError('the amount must be a whole number of cents');
    const before = await this.byLoginOrFail(login);
    // Write first, check after: the update takes the write lock, so a concurrent change
    // cannot slip between the check and the write; a negative result rolls back.
    const balance = await this.deps.store.transaction(async (repos) => {
      const after = await repos.accounts.addBalance(before.id, cents);
      if (after < 0) throw new InputError(`the balance of "${login}" cannot go below 0.00`);
      return after;
    });
    return { before, after: { ...before, balanceCents: balance } };
  }
}

/** Traffic an operator grants: whole bytes from 0 to MAX_TRAFFIC_BYTES. */
function checkTraffic(bytes: number): void {
  if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > MAX_TRAFFIC_BYTES) {
    throw new InputError(`traffic must be a whole number of bytes from 0 to ${MAX_TRAFFIC_TEXT} (${MAX_TRAFFIC_BYTES})`);
  }
}

/** The password rules of sign-up, the CLI and password changes. */
function checkPassword(password: string): void {
  if (password.length < 8) throw new InputError('password must be at least 8 characters');
  if (password.length > 1024) throw new InputError('password must be at most 1024 characters');
}

/** Adds traffic in SQL and refuses (rolling the transaction back) past MAX_TRAFFIC_BYTES. */
async function addTrafficWithin(repos: Repositories, account: Account, trafficBytes: number): Promise<void> {
  if (trafficBytes === 0) return;
  await repos.accounts.addTraffic(account.id, trafficBytes);
  const after = await repos.accounts.byId(account.id);
  if (after && after.trafficLeft > MAX_TRAFFIC_BYTES) throw new InputError(`traffic of "${account.login}" would exceed ${MAX_TRAFFIC_TEXT}`);
}
