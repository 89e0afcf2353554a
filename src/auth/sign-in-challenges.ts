import { createHash, randomBytes } from 'node:crypto';
import type { MetadataStore, SignInChallenge } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';

/** What each step of a sign-in keeps between two requests. */
export type ChallengeKind = 'oidc' | 'passkey-register' | 'passkey-sign-in' | 'second-factor' | 'second-factor-setup';

/** A value the browser holds: 256 random bits, base64url (43 characters). */
const VALUE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** An issued challenge: the value for the browser (a cookie, an OIDC `state`), never stored. */
export interface IssuedChallenge {
  value: string;
  expiresAt: number;
}

/** A live challenge, with its payload parsed. */
export interface OpenChallenge<Payload> {
  /** The stored row's id (SHA-256 of the value), for setPayload. */
  id: string;
  accountId: number | null;
  payload: Payload;
  expiresAt: number;
}

/**
 * The state of sign-ins in progress (an OIDC flow, a WebAuthn ceremony, a password waiting
 * for its second factor), kept in the database so that any server behind the load balancer
 * finishes a step another began. The browser holds a random value; the table holds its
 * SHA-256, so a read of the database cannot continue anyone's sign-in. `take` is single-use
 * across servers (one DELETE ... RETURNING).
 */
export class SignInChallenges {
  constructor(private readonly deps: { store: MetadataStore; clock: Clock; randomValue?: () => string }) {}

  /** Stores a new challenge of `kind` living `ttlMs`; returns the value for the browser. */
  async issue<Payload>(kind: ChallengeKind, accountId: number | null, payload: Payload, ttlMs: number): Promise<IssuedChallenge> {
    const now = this.deps.clock();
    // Expired ones are swept where a write happens anyway; the index keeps it cheap.
    await this.deps.store.signInChallenges.removeExpired(now);
    const value = this.deps.randomValue?.() ?? randomBytes(32).toString('base64url');
    if (!VALUE_PATTERN.test(value)) throw new Error('challenge values must be 43 base64url characters');
    const expiresAt = now + ttlMs;
    await this.deps.store.signInChallenges.create({ id: sha256(value), kind, accountId, payload: JSON.stringify(payload), createdAt: now, expiresAt });
    return { value, expiresAt };
  }

  /** The live challenge of a browser's value, left in place; null for anything else. */
  async peek<Payload>(kind: ChallengeKind, value: unknown): Promise<OpenChallenge<Payload> | null> {
    if (typeof value !== 'string' || !VALUE_PATTERN.test(value)) return null;
    return opened<Payload>(await this.deps.store.signInChallenges.peek(sha256(value), kind, this.deps.clock()));
  }

  /** Removes and returns the live challenge of a browser's value; of concurrent takers, one gets it. */
  async take<Payload>(kind: ChallengeKind, value: unknown): Promise<OpenChallenge<Payload> | null> {
    if (typeof value !== 'string' || !VALUE_PATTERN.test(value)) return null;
    return opened<Payload>(await this.deps.store.signInChallenges.take(sha256(value), kind, this.deps.clock()));
  }

  /** Replaces a live challenge's payload; false when it is gone. */
  update<Payload>(challenge: OpenChallenge<Payload>, payload: Payload): Promise<boolean> {
    return this.deps.store.signInChallenges.setPayload(challenge.id, JSON.stringify(payload));
  }
}

function opened<Payload>(row: SignInChallenge | null): OpenChallenge<Payload> | null {
  if (!row) return null;
  return { id: row.id, accountId: row.accountId, payload: JSON.parse(row.payload) as Payload, expiresAt: row.expiresAt };
}
