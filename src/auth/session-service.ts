import { createHash, randomBytes } from 'node:crypto';
import type { MetadataStore } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import type { Account } from '../domain/types.js';
import { constantTimeEqual, type ServerSecrets } from '../security/secrets.js';
import type { AccountsService } from '../services/accounts-service.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** A session token: 256 random bits, base64url (43 characters). */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** A pre-session cookie: 256 random bits, a dot, the issue time in base 36. */
const PRE_SESSION_PATTERN = /^([A-Za-z0-9_-]{43})\.([0-9a-z]{1,12})$/;

export interface SessionServiceDeps {
  store: MetadataStore;
  accounts: AccountsService;
  secrets: ServerSecrets;
  clock: Clock;
  /** 256 random bits as base64url; injectable so tests can be deterministic (STYLE.md 10). */
  randomToken?: () => string;
  /** A session unused this long ends (sliding). Default 30 days. */
  idleMs?: number;
  /** No session lives longer than this after sign-in, however often used. Default 90 days. */
  maxAgeMs?: number;
  /** Use is recorded (and the end moved) at most this often, to spare writes. Default 5 minutes. */
  touchEveryMs?: number;
  /** Lifetime of a pre-session (the sign-in and sign-up forms). Default 2 hours. */
  preSessionMs?: number;
}

/** A signed-in request's session. */
export interface ActiveSession {
  /** The row id (SHA-256 of the token). */
  id: string;
  /** The signed-in account, read on this request (never disabled). */
  account: Account;
  /** The token every state-changing form of this session carries. */
  csrfToken: string;
  /** When the session ends unless used again, epoch ms. */
  expiresAt: number;
  /** When its sign-in happened, epoch ms: what asks for a recent sign-in (adding a passkey) reads it. */
  signedInAt: number;
  /** Whether this request moved the end: the cookie is sent again with the new lifetime. */
  renewed: boolean;
}

/** A new session: the token for the cookie, never stored. */
export interface StartedSession {
  token: string;
  expiresAt: number;
}

/** A pre-session: the cookie value and the token its forms carry. */
export interface PreSession {
  cookie: string;
  csrfToken: string;
  expiresAt: number;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Web sign-in sessions, stored server side, and their CSRF tokens.
 *
 * The cookie holds a random 256-bit token; the sessions table holds only its SHA-256.
 * Every state-changing form carries a token derived with the server secret from the
 * session's own random secret. Before sign-in, the forms are bound the same way to a
 * short-lived random pre-session cookie (signed double submit).
 */
export class SessionService {
  private readonly randomToken: () => string;
  /** A session unused this long ends. */
  readonly idleMs: number;
  private readonly maxAgeMs: number;
  private readonly touchEveryMs: number;
  /** Lifetime of a pre-session. */
  readonly preSessionMs: number;

  constructor(private readonly deps: SessionServiceDeps) {
    this.randomToken = deps.randomToken ?? (() => randomBytes(32).toString('base64url'));
    this.idleMs = deps.idleMs ?? 30 * DAY_MS;
    this.maxAgeMs = deps.maxAgeMs ?? 90 * DAY_MS;
    this.touchEveryMs = deps.touchEveryMs ?? 5 * MINUTE_MS;
    this.preSessionMs = deps.preSessionMs ?? 120 * MINUTE_MS;
  }

  /**
   * Starts a session for a freshly authenticated account. Always a new token (no session
   * fixation); the session of `replacing` (the cookie the browser sent) ends.
   */
  async start(accountId: number, replacing?: string): Promise<StartedSession> {
    if (replacing !== undefined) await this.end(replacing);
    const now = this.deps.clock();
    // Ended sessions are swept here, where a write happens anyway; the index keeps it cheap.
    await this.deps.store.sessions.removeExpired(now);
    const token = this.randomToken();
    if (!TOKEN_PATTERN.test(token)) throw new Error('session tokens must be 43 base64url characters');
    const expiresAt = now + Math.min(this.idleMs, this.maxAgeMs);
    await this.deps.store.sessions.create({
      id: sha256(token),
      accountId,
      csrfSecret: randomBytes(32).toString('hex'),
      createdAt: now,
      expiresAt,
      lastSeenAt: now,
    });
    return { token, expiresAt };
  }

  /**
   * The session of a cookie token, or null: unknown, ended, or its account disabled (read
   * on every request, so `accounts disable` signs the account out at once). Records use
   * and slides the end forward.
   */
  async resume(token: string | undefined): Promise<ActiveSession | null> {
    if (token === undefined || !TOKEN_PATTERN.test(token)) return null;
    const session = await this.deps.store.sessions.byId(sha256(token));
    if (!session) return null;
    const now = this.deps.clock();
    if (session.expiresAt <= now) {
      await this.deps.store.sessions.remove(session.id);
      return null;
    }
    const account = await this.deps.accounts.activeAccount(session.accountId);
    if (!account) {
      // Disabled: the session does not come back when the account is enabled again.
      await this.deps.store.sessions.remove(session.id);
      return null;
    }
    let { expiresAt } = session;
    let renewed = false;
    if (now - session.lastSeenAt >= this.touchEveryMs) {
      expiresAt = Math.min(now + this.idleMs, session.createdAt + this.maxAgeMs);
      await this.deps.store.sessions.touch(session.id, now, expiresAt);
      renewed = true;
    }
    return {
      id: session.id,
      account,
      csrfToken: this.deps.secrets.csrfToken('session', session.csrfSecret),
      expiresAt,
      renewed,
      signedInAt: session.createdAt,
    };
  }

  /** Ends the session of a cookie token (sign-out); a no-op for an unknown token. */
  async end(token: string): Promise<void> {
    if (TOKEN_PATTERN.test(token)) await this.deps.store.sessions.remove(sha256(token));
  }

  /** Ends every session of an account (password reset, "sign out everywhere"); returns how many. */
  endAll(accountId: number): Promise<number> {
    return this.deps.store.sessions.removeForAccount(accountId);
  }

  /** Whether a submitted form token is the session's, compared in constant time. */
  checkCsrf(session: ActiveSession, submitted: unknown): boolean {
    return typeof submitted === 'string' && constantTimeEqual(session.csrfToken, submitted);
  }

  /**
   * The pre-session of the sign-in and sign-up forms: the one the browser holds while it
   * has more than half its life left, else a new one.
   */
  preSession(cookie: string | undefined): PreSession {
    const issuedAt = this.preSessionIssuedAt(cookie);
    if (cookie !== undefined && issuedAt !== null && this.deps.clock() - issuedAt < this.preSessionMs / 2) {
      return { cookie, csrfToken: this.deps.secrets.csrfToken('pre-session', cookie), expiresAt: issuedAt + this.preSessionMs };
    }
    const now = this.deps.clock();
    const fresh = `${this.randomToken()}.${now.toString(36)}`;
    return { cookie: fresh, csrfToken: this.deps.secrets.csrfToken('pre-session', fresh), expiresAt: now + this.preSessionMs };
  }

  /** Whether a form token matches a live pre-session cookie, compared in constant time. */
  checkPreSessionCsrf(cookie: string | undefined, submitted: unknown): boolean {
    if (cookie === undefined || typeof submitted !== 'string' || this.preSessionIssuedAt(cookie) === null) return false;
    return constantTimeEqual(this.deps.secrets.csrfToken('pre-session', cookie), submitted);
  }

  /** The issue time of a well-formed pre-session cookie still within its lifetime, else null. */
  private preSessionIssuedAt(cookie: string | undefined): number | null {
    const match = cookie === undefined ? null : PRE_SESSION_PATTERN.exec(cookie);
    if (!match) return null;
    const issuedAt = parseInt(match[2]!, 36);
    const age = this.deps.clock() - issuedAt;
    return age >= 0 && age < this.preSessionMs ? issuedAt : null;
  }
}
