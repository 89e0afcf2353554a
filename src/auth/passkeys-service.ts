import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
  VerifiedAuthenticationResponse,
  VerifiedRegistrationResponse,
} from '@simplewebauthn/server';
import { DuplicateError, type MetadataStore, type PasskeyRecord } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import type { RelyingParty } from './passkey-relying-party.js';
import type { SignInChallenges } from './sign-in-challenges.js';

/** How long a ceremony may take, from the options to the answer. */
export const PASSKEY_CEREMONY_MS = 5 * 60_000;
/** A passkey's name, at most. */
export const PASSKEY_NAME_MAX = 60;
/** Passkeys per account, at most: enough for every device someone owns. */
export const PASSKEYS_PER_ACCOUNT = 20;

/** A refusal with what to tell the person; `status` is the HTTP status it is sent with. */
export class PasskeyError extends Error {
  override name = 'PasskeyError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The answer of a ceremony, as the browser sent it; only its shape is checked here, the library checks the rest. */
interface CredentialJson {
  id: string;
  rawId: string;
  type: string;
  response: { clientDataJSON: string; userHandle?: string };
}

const EXPIRED = 'This passkey prompt has expired or was used already. Try again.';
const NOT_VERIFIED = 'The passkey’s answer could not be verified. Try again.';
/** The AuthenticatorTransport names of WebAuthn Level 3; anything else a browser sends is dropped. */
const KNOWN_TRANSPORTS: ReadonlySet<string> = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

/**
 * Passkeys (WebAuthn, issue 26), through SimpleWebAuthn: registration from the profile
 * (discoverable credentials with user verification, so a passkey is both factors and
 * sign-in needs no login typed), sign-in, and the owner's list. Each ceremony's challenge
 * is a SignInChallenges value (in the database, so any server finishes it), taken once:
 * a replayed answer finds nothing.
 */
export class PasskeysService {
  constructor(private readonly deps: { store: MetadataStore; challenges: SignInChallenges; clock: Clock }) {}

  /** An account's passkeys, oldest first. */
  list(accountId: number): Promise<PasskeyRecord[]> {
    return this.deps.store.passkeys.listForAccount(accountId);
  }

  /** The options for navigator.credentials.create(), the account's passkeys excluded. */
  async registrationOptions(rp: RelyingParty, account: { id: number; login: string; name: string }): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const existing = await this.list(account.id);
    if (existing.length >= PASSKEYS_PER_ACCOUNT) {
      throw new PasskeyError(409, `An account has at most ${PASSKEYS_PER_ACCOUNT} passkeys. Remove one first.`);
    }
    const { value } = await this.deps.challenges.issue('passkey-register', account.id, {}, PASSKEY_CEREMONY_MS);
    return (await webauthn()).generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.id,
      userName: account.login,
      userDisplayName: account.name || account.login,
      userID: userHandleOf(account.id),
      // The challenge IS the stored value (32 random bytes): the answer names it, so no cookie is needed.
      challenge: fromBase64url(value),
      timeout: PASSKEY_CEREMONY_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({ id: passkey.id, transports: passkey.transports })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    });
  }

  /** Verifies the browser's answer to registrationOptions and stores the passkey under `name` (blank: "Passkey N"). */
  async register(rp: RelyingParty, accountId: number, answer: unknown, name: string): Promise<PasskeyRecord> {
    const cleanName = checkedName(name);
    const response = credentialJson(answer, 'attestationObject') as unknown as RegistrationResponseJSON;
    const challenge = await this.takeChallenge('passkey-register', response);
    if (challenge.accountId !== accountId) throw new PasskeyError(400, EXPIRED);
    let verified: VerifiedRegistrationResponse;
    try {
      verified = await (await webauthn()).verifyRegistrationResponse({
        response,
        expectedChallenge: challenge.value,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        requireUserVerification: true,
      });
    } catch {
      throw new PasskeyError(400, NOT_VERIFIED);
    }
    if (!verified.verified) throw new PasskeyError(400, NOT_VERIFIED);
    const { credential, credentialBackedUp } = verified.registrationInfo;
    // WebAuthn caps credential ids at 1023 bytes (the column holds their base64url form).
    if (fromBase64url(credential.id).length > 1023) throw new PasskeyError(400, NOT_VERIFIED);
    const existing = await this.list(accountId);
    // Again here: ceremonies started while under the cap may end together.
    if (existing.length >= PASSKEYS_PER_ACCOUNT) {
      throw new PasskeyError(409, `An account has at most ${PASSKEYS_PER_ACCOUNT} passkeys. Remove one first.`);
    }
    const passkey: PasskeyRecord = {
      id: credential.id,
      accountId,
      name: cleanName || defaultName(existing),
      publicKey: toBase64url(credential.publicKey),
      counter: credential.counter,
      // Whatever the browser said, as the library passes it on: only the known names are kept.
      transports: Array.isArray(credential.transports) ? credential.transports.filter((t) => KNOWN_TRANSPORTS.has(t)) : [],
      backedUp: credentialBackedUp,
      createdAt: this.deps.clock(),
      lastUsedAt: null,
    };
    try {
      await this.deps.store.passkeys.create(passkey);
    } catch (error) {
      if (error instanceof DuplicateError) throw new PasskeyError(409, 'This passkey is registered already.');
      throw error;
    }
    return passkey;
  }

  /** The options for navigator.credentials.get(): no credentials listed, the authenticator offers the site's passkeys. */
  async signInOptions(rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const { value } = await this.deps.challenges.issue('passkey-sign-in', null, {}, PASSKEY_CEREMONY_MS);
    return (await webauthn()).generateAuthenticationOptions({
      rpID: rp.id,
      challenge: fromBase64url(value),
      timeout: PASSKEY_CEREMONY_MS,
      userVerification: 'required',
    });
  }

  /**
   * Verifies a sign-in answer; returns the account to start a session for. The challenge is
   * taken first (once), then the credential must exist, belong to an active account whose
   * user handle the answer carries, verify with its public key, and move its counter forward.
   */
  async signIn(rp: RelyingParty, answer: unknown): Promise<number> {
    const response = credentialJson(answer, 'authenticatorData') as unknown as AuthenticationResponseJSON;
    const challenge = await this.takeChallenge('passkey-sign-in', response);
    const passkey = await this.deps.store.passkeys.byId(response.id);
    if (!passkey) {
      throw new PasskeyError(401, 'This passkey is not registered on this site (it may have been removed). Sign in another way.');
    }
    // A discoverable credential names its account; it must be the one the credential was registered to.
    if (response.response.userHandle !== toBase64url(userHandleOf(passkey.accountId))) {
      throw new PasskeyError(401, NOT_VERIFIED);
    }
    let verified: VerifiedAuthenticationResponse;
    try {
      verified = await (await webauthn()).verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge.value,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        credential: { id: passkey.id, publicKey: fromBase64url(passkey.publicKey), counter: passkey.counter, transports: passkey.transports as never },
        requireUserVerification: true,
      });
    } catch {
      // A bad signature, a wrong origin, or a counter that went back (a cloned authenticator).
      throw new PasskeyError(401, NOT_VERIFIED);
    }
    if (!verified.verified) throw new PasskeyError(401, NOT_VERIFIED);
    // Only the key's holder learns the account's state: checked after the signature.
    const account = await this.deps.store.accounts.byId(passkey.accountId);
    if (!account || account.disabled) throw new PasskeyError(401, NOT_VERIFIED);
    const { newCounter, credentialBackedUp } = verified.authenticationInfo;
    // The check above read the counter; this one statement settles a race between two servers.
    if (!(await this.deps.store.passkeys.recordUse(passkey.id, newCounter, credentialBackedUp, this.deps.clock()))) {
      throw new PasskeyError(401, NOT_VERIFIED);
    }
    return passkey.accountId;
  }

  /** Renames a passkey of the account; false when it has none of this id. */
  rename(accountId: number, id: string, name: string): Promise<boolean> {
    const cleanName = checkedName(name);
    if (!cleanName) throw new PasskeyError(400, 'Give the passkey a name.');
    return this.deps.store.passkeys.rename(id, accountId, cleanName);
  }

  /** Removes a passkey of the account; false when it has none of this id. */
  remove(accountId: number, id: string): Promise<boolean> {
    return this.deps.store.passkeys.remove(id, accountId);
  }

  /** Takes the ceremony's challenge, named by the answer's client data; once only. */
  private async takeChallenge(kind: 'passkey-register' | 'passkey-sign-in', response: CredentialJson) {
    let named: unknown;
    try {
      named = (JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown }).challenge;
    } catch {
      throw new PasskeyError(400, NOT_VERIFIED);
    }
    const taken = await this.deps.challenges.take(kind, named);
    if (!taken) throw new PasskeyError(400, EXPIRED);
    return { accountId: taken.accountId, value: named as string };
  }
}

/**
 * The WebAuthn library, loaded on first use: it pulls in X.509 and ASN.1 parsers that cost
 * every process half a second of CPU at start (each CLI command too), and only the
 * passkey ceremonies need it.
 */
let library: Promise<typeof import('@simplewebauthn/server')> | undefined;
const webauthn = () => (library ??= import('@simplewebauthn/server'));

/** base64url without padding, as WebAuthn's JSON carries it (padding tolerated). */
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;
const fromBase64url = (text: string): Uint8Array<ArrayBuffer> => Uint8Array.from(Buffer.from(text, 'base64url'));
const toBase64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');

/** The WebAuthn user handle of an account: its id, which is no personal information (WebAuthn §14.6.1). */
function userHandleOf(accountId: number): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`filehaven:${accountId}`);
}

/** The answer's shape: what the browser script sends, else a clear 400 (never a 500). */
function credentialJson(answer: unknown, part: 'attestationObject' | 'authenticatorData'): CredentialJson {
  let value = answer;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new PasskeyError(400, 'The passkey’s answer is not valid JSON.');
    }
  }
  const base64url = (text: unknown) => typeof text === 'string' && text.length > 0 && text.length < 65_536 && BASE64URL.test(text);
  const credential = value as Partial<CredentialJson> & { response?: Record<string, unknown> };
  if (
    typeof credential !== 'object' ||
    credential === null ||
    !base64url(credential.id) ||
    credential.rawId !== credential.id ||
    credential.type !== 'public-key' ||
    typeof credential.response !== 'object' ||
    credential.response === null ||
    !base64url(credential.response.clientDataJSON) ||
    !base64url(credential.response[part]) ||
    (credential.response.userHandle !== undefined && typeof credential.response.userHandle !== 'string')
  ) {
    throw new PasskeyError(400, 'The passkey’s answer is not a WebAuthn credential.');
  }
  return credential as CredentialJson;
}

/** A name as typed, trimmed, spaces folded; '' when blank. */
function checkedName(name: string): string {
  const clean = name
    .replace(/[\p{Cc}\p{Cf}]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
  if ([...clean].length > PASSKEY_NAME_MAX) throw new PasskeyError(400, `A passkey’s name is at most ${PASSKEY_NAME_MAX} characters.`);
  return clean;
}

/** "Passkey N", the first N no passkey of the account is named. */
function defaultName(existing: PasskeyRecord[]): string {
  const taken = new Set(existing.map((passkey) => passkey.name));
  let n = existing.length + 1;
  while (taken.has(`Passkey ${n}`)) n++;
  return `Passkey ${n}`;
}
