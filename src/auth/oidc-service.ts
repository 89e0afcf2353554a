import { createHash, randomBytes } from 'node:crypto';
import { DuplicateError, type LinkedIdentity, type MetadataStore } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import type { Account } from '../domain/types.js';
import { constantTimeEqual } from '../security/secrets.js';
import type { AccountsService } from '../services/accounts-service.js';
import { type FlowSecrets, IssuerUnreachableError, OidcClient, type VerifiedClaims } from './oidc-client.js';
import type { OidcSettings } from './oidc-settings.js';
import type { SignInChallenges } from './sign-in-challenges.js';

export { IssuerUnreachableError };

/** What a flow is for: signing in, or linking an identity to the signed-in account. */
export type OidcPurpose = 'sign-in' | 'link';

/** What the challenge of a flow keeps until the callback (in the database, so any server finishes it). */
interface FlowPayload extends FlowSecrets {
  purpose: OidcPurpose;
  /** A checked path of this site to return to after signing in; null for the profile. */
  next: string | null;
}

/** Why a callback signs nobody in. */
export type OidcRefusal =
  /** No flow cookie, or one that is not this callback's `state`: the link was carried to another browser. */
  | 'other-browser'
  /** The state is unknown, used already or expired: the callback was opened twice or came too late. */
  | 'stale'
  /** The issuer answered with an error (the person cancelled, say). */
  | 'issuer-error'
  /** The code exchange or the ID token failed a check (signature, issuer, audience, expiry, nonce). */
  | 'invalid-response'
  /** The issuer could not be reached for the code exchange. */
  | 'unreachable'
  /** A new identity and `--oidc-signup` is off. */
  | 'no-account'
  /** The identity's account is disabled. */
  | 'disabled'
  /** Linking an identity that another account has already. */
  | 'linked-elsewhere'
  /** Linking, but the browser is no longer signed in to the account that started it. */
  | 'link-session';

export type OidcOutcome =
  | { kind: 'signed-in'; accountId: number; next: string | null; created: boolean }
  | { kind: 'linked'; accountId: number }
  | { kind: 'refused'; reason: OidcRefusal /** For the log: never a code, a token or the state. */; detail?: string };

/** How long a browser may spend at the issuer before the flow expires. */
export const FLOW_TTL_MS = 10 * 60_000;

const RESERVED_LOGINS = new Set(['admin', 'administrator', 'root', 'operator', 'support', 'filehaven']);
const CONTROL = /\p{Cc}/u;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface OidcServiceDeps {
  settings: OidcSettings;
  store: MetadataStore;
  accounts: AccountsService;
  challenges: SignInChallenges;
  clock: Clock;
  /** Whether passkeys count as a way in (`--passkeys`). */
  passkeys: boolean;
}

/**
 * Single sign-on through OpenID Connect (issue 26): starts a flow (the state in the
 * sign-in challenges, bound to the browser by a cookie the `state` is derived from), finishes it
 * (single use across servers), and decides who the verified identity signs in as.
 *
 * An identity is issuer + subject, never an e-mail: a provider may let anyone claim any
 * address, so an e-mail equal to an account's never links or signs in that account
 * (account takeover through an unverified e-mail is the classic hole). Linking happens only
 * from the profile of an account already signed in.
 */
export class OidcService {
  readonly client: OidcClient;

  constructor(private readonly deps: OidcServiceDeps) {
    this.client = new OidcClient(deps.settings);
  }

  get settings(): OidcSettings {
    return this.deps.settings;
  }

  /**
   * Starts a flow: the value for the browser's cookie (the `state` is its SHA-256) and the
   * issuer's URL to send it to. IssuerUnreachableError when discovery fails; nothing is
   * stored then.
   */
  async begin(purpose: OidcPurpose, accountId: number | null, next: string | null, redirectUri: string): Promise<{ value: string; url: URL }> {
    await this.client.configuration();
    const secrets = await OidcClient.newFlowSecrets();
    const payload: FlowPayload = { ...secrets, purpose, next };
    const { value } = await this.deps.challenges.issue('oidc', accountId, payload, FLOW_TTL_MS);
    return { value, url: await this.client.authorizationUrl(redirectUri, stateOf(value), secrets) };
  }

  /**
   * Finishes a flow at the callback. `cookie` is the flow cookie the browser sent;
   * `signedIn` the account of its session, if any (linking must come back to it).
   */
  async finish(callbackUrl: URL, redirectUri: string, cookie: string | undefined, signedIn: number | null): Promise<OidcOutcome> {
    const state = callbackUrl.searchParams.get('state');
    // The cookie binds the flow to the browser that began it: a callback URL opened
    // elsewhere (login CSRF, a link passed on) carries the state but not the cookie. The
    // state is a one-way function of the cookie and the flow is found by the cookie alone,
    // so a callback URL that leaked (the issuer's logs, a proxy) does not give the cookie.
    if (state === null || cookie === undefined || !constantTimeEqual(state, stateOf(cookie))) return refused('other-browser');
    const challenge = await this.deps.challenges.take<FlowPayload>('oidc', cookie);
    if (!challenge) return refused('stale');
    const issuerError = callbackUrl.searchParams.get('error');
    if (issuerError !== null) return refused('issuer-error', issuerError.slice(0, 64));
    let claims: VerifiedClaims;
    try {
      claims = await this.client.finish(callbackUrl, redirectUri, state, challenge.payload);
    } catch (error) {
      if (error instanceof IssuerUnreachableError) return refused('unreachable', error.message);
      return refused('invalid-response', describe(error));
    }
    if (challenge.payload.purpose === 'link') {
      if (challenge.accountId === null || challenge.accountId !== signedIn) return refused('link-session');
      return this.link(challenge.accountId, claims);
    }
    return this.signIn(claims, challenge.payload.next);
  }

  private async signIn(claims: VerifiedClaims, next: string | null): Promise<OidcOutcome> {
    const known = await this.deps.store.identities.byIssuerSubject(claims.issuer, claims.subject);
    if (known) return this.signInAs(known, next, false);
    if (!this.deps.settings.signup) return refused('no-account');
    for (const login of loginCandidates(claims)) {
      if (await this.deps.store.accounts.byLogin(login)) continue;
      try {
        // The account and its identity in one transaction: a lost race leaves neither.
        const made: { identity?: LinkedIdentity } = {};
        await this.deps.accounts.createWithoutPassword({ login, name: cleanName(claims.name), email: cleanEmail(claims.email) }, async (repos, account) => {
          made.identity = await repos.identities.link(this.identityOf(account.id, claims));
        });
        if (!made.identity) throw new Error('the new account was made without its identity');
        return this.signInAs(made.identity, next, true);
      } catch (error) {
        if (!(error instanceof DuplicateError)) throw error;
        // Another server signed the same person up at this moment: theirs is the account.
        const raced = await this.deps.store.identities.byIssuerSubject(claims.issuer, claims.subject);
        if (raced) return this.signInAs(raced, next, false);
        // Else the login was taken meanwhile: try the next one.
      }
    }
    throw new Error('no free login for a new single sign-on account');
  }

  private async signInAs(identity: LinkedIdentity, next: string | null, created: boolean): Promise<OidcOutcome> {
    const account = await this.deps.accounts.activeAccount(identity.accountId);
    if (!account) return refused('disabled');
    await this.deps.store.identities.touch(identity.id, this.deps.clock());
    return { kind: 'signed-in', accountId: account.id, next, created };
  }

  private async link(accountId: number, claims: VerifiedClaims): Promise<OidcOutcome> {
    try {
      await this.deps.store.identities.link(this.identityOf(accountId, claims));
    } catch (error) {
      if (!(error instanceof DuplicateError)) throw error;
      const existing = await this.deps.store.identities.byIssuerSubject(claims.issuer, claims.subject);
      // Linked to this account already: nothing to do.
      if (existing?.accountId !== accountId) return refused('linked-elsewhere');
    }
    return { kind: 'linked', accountId };
  }

  private identityOf(accountId: number, claims: VerifiedClaims) {
    return { accountId, issuer: claims.issuer, subject: claims.subject, email: cleanEmail(claims.email), createdAt: this.deps.clock() };
  }

  /** The identities linked to an account. */
  identities(accountId: number): Promise<LinkedIdentity[]> {
    return this.deps.store.identities.listForAccount(accountId);
  }

  /**
   * Whether the account keeps a way in without `identity`: another identity, a password
   * that may sign it in (under `--oidc-only` only an operator's does), or a passkey.
   */
  async canUnlink(account: Account, identityId: number): Promise<boolean> {
    const others = (await this.identities(account.id)).filter((identity) => identity.id !== identityId);
    if (others.length > 0) return true;
    if ((!this.deps.settings.only || account.isOperator) && (await this.deps.accounts.hasPassword(account))) return true;
    return this.deps.passkeys && (await this.deps.store.accounts.signInMethods(account.id)).passkeys > 0;
  }

  /** Unlinks an identity of the account; 'last' when it is its only way in, 'unknown' when not its own. */
  async unlink(account: Account, identityId: number): Promise<'unlinked' | 'last' | 'unknown'> {
    const owned = (await this.identities(account.id)).some((identity) => identity.id === identityId);
    if (!owned) return 'unknown';
    if (!(await this.canUnlink(account, identityId))) return 'last';
    return (await this.deps.store.identities.unlink(identityId, account.id)) ? 'unlinked' : 'unknown';
  }
}

const refused = (reason: OidcRefusal, detail?: string): OidcOutcome => ({ kind: 'refused', reason, ...(detail ? { detail } : {}) });

/** An error's name and message for the log; openid-client's messages hold no tokens. */
function describe(error: unknown): string {
  const { name, message, code, cause } = error as { name?: string; message?: string; code?: string; cause?: unknown };
  // openid-client wraps the failed check (a bad signature, say) as the cause.
  const why = cause instanceof Error ? ` (${describe(cause)})` : '';
  return `${name ?? 'Error'}${code ? ` ${code}` : ''}: ${message ?? ''}${why}`.slice(0, 300);
}

/**
 * Logins to try for a new account, from `preferred_username` (else the e-mail's local
 * part), made valid (letters, digits and . _ @ + -, as accounts-service checks) and then
 * unique: `ada`, `ada-2` ... `ada-9`, then `ada-` and random letters.
 */
export function* loginCandidates(claims: Pick<VerifiedClaims, 'preferredUsername' | 'email'>): Generator<string> {
  const raw = claims.preferredUsername ?? claims.email?.split('@')[0] ?? '';
  let base = raw
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._@+-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 50);
  if (base === '') base = 'user';
  else if (RESERVED_LOGINS.has(base.toLowerCase())) base = `${base}-sso`;
  yield base;
  for (let n = 2; n <= 9; n++) yield `${base}-${n}`;
  for (let n = 0; n < 10; n++) yield `${base}-${randomBytes(4).toString('hex')}`;
}

const cleanName = (name: string | null) =>
  (name ?? '')
    .replace(/\p{Cc}/gu, '')
    .trim()
    .slice(0, 100);
const cleanEmail = (email: string | null) => {
  const trimmed = (email ?? '').trim();
  return trimmed.length <= 254 && EMAIL.test(trimmed) && !CONTROL.test(trimmed) ? trimmed : '';
};

/** The `state` sent to the issuer for a flow cookie: derived one way, so the URL never reveals the cookie. */
function stateOf(cookie: string): string {
  return createHash('sha256').update(`oidc-state\n${cookie}`).digest('base64url');
}
