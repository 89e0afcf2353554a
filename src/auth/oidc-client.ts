import type * as client from 'openid-client';
import type { OidcSettings } from './oidc-settings.js';

/** The issuer could not be reached or answered nonsense at discovery: nothing to do but try later. */
export class IssuerUnreachableError extends Error {
  override name = 'IssuerUnreachableError';
}

/** What a flow needs before the browser goes to the issuer (stored in the challenge, never in memory). */
export interface FlowSecrets {
  /** The PKCE code verifier (RFC 7636); its S256 challenge goes in the URL. */
  codeVerifier: string;
  /** The OpenID Connect nonce the ID token must carry. */
  nonce: string;
}

/** The ID token's claims this site uses, after openid-client checked the token. */
export interface VerifiedClaims {
  issuer: string;
  subject: string;
  preferredUsername: string | null;
  name: string | null;
  email: string | null;
}

// openid-client (with jose) is loaded with the first single sign-on, not at the start: a
// server without OIDC, or one nobody signs in to, does not hold it (issue 28: idle memory).
let library: Promise<typeof client> | undefined;
const openid = () => (library ??= import('openid-client'));

/** How long discovery may take before the sign-in page says the issuer cannot be reached. */
const DISCOVERY_TIMEOUT_MS = 5000;

/**
 * The relying party's side of the authorization code flow, through openid-client: discovery
 * (cached per process once it worked; a failed one is tried again on the next sign-in, so an
 * issuer that was down at start does not keep single sign-on off), the authorization URL with
 * PKCE (S256), `state` and `nonce`, and the code exchange whose ID token openid-client checks:
 * its signature against the issuer's keys (non-repudiation checks on, so a token altered on
 * the way is refused even over TLS), issuer, audience, expiry and nonce.
 */
export class OidcClient {
  private discovered: Promise<client.Configuration> | null = null;

  constructor(private readonly settings: OidcSettings) {}

  /** The issuer's configuration; IssuerUnreachableError when discovery fails (tried again next time). */
  async configuration(): Promise<client.Configuration> {
    this.discovered ??= this.discover();
    try {
      return await this.discovered;
    } catch (error) {
      this.discovered = null;
      throw new IssuerUnreachableError(`discovery at ${this.settings.issuer.origin} failed: ${(error as Error).message}`);
    }
  }

  private async discover(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret, insecure } = this.settings;
    const client = await openid();
    const execute = [client.enableNonRepudiationChecks, ...(insecure ? [client.allowInsecureRequests] : [])];
    return client.discovery(
      issuer,
      clientId,
      undefined,
      // A confidential client sends its secret (client_secret_basic); a public one proves
      // itself with PKCE alone.
      clientSecret === null ? client.None() : client.ClientSecretBasic(clientSecret),
      { execute, timeout: DISCOVERY_TIMEOUT_MS / 1000 },
    );
  }

  /** New random PKCE verifier and nonce for one flow. */
  static async newFlowSecrets(): Promise<FlowSecrets> {
    const client = await openid();
    return { codeVerifier: client.randomPKCECodeVerifier(), nonce: client.randomNonce() };
  }

  /** The issuer's authorization URL for one flow. */
  async authorizationUrl(redirectUri: string, state: string, secrets: FlowSecrets): Promise<URL> {
    const configuration = await this.configuration();
    const client = await openid();
    return client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes,
      state,
      nonce: secrets.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(secrets.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  /**
   * Exchanges the code of the callback URL for tokens and returns the checked ID token's
   * claims. Throws on anything wrong (an error from the issuer, a state or nonce mismatch, a
   * bad signature, an expired token).
   */
  async finish(callbackUrl: URL, redirectUri: string, expectedState: string, secrets: FlowSecrets): Promise<VerifiedClaims> {
    const configuration = await this.configuration();
    const client = await openid();
    // openid-client takes the redirect URI from the URL it is given, minus its query: the
    // callback as this site names it, not as a proxy in front may have rewritten it.
    const current = new URL(redirectUri);
    current.search = callbackUrl.search;
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: secrets.codeVerifier,
        expectedState,
        expectedNonce: secrets.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      // fetch's own failures (refused, reset, timed out) mean the issuer is not there; anything
      // else is an answer that failed a check.
      // Discovered again next time: a moved or restarted issuer is found afresh, a dead one
      // answered with the clear page at once.
      if (isNetworkFailure(error)) this.discovered = null;
      if (isNetworkFailure(error)) throw new IssuerUnreachableError(`the token endpoint of ${this.settings.issuer.origin} cannot be reached`);
      throw error;
    }
    const claims = tokens.claims();
    if (!claims) throw new Error('the token response has no ID token');
    const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
    return {
      issuer: claims.iss,
      subject: claims.sub,
      preferredUsername: text(claims.preferred_username),
      name: text(claims.name),
      email: text(claims.email),
    };
  }
}

/** Codes openid-client gives a token request that timed out, was cut, or got no OAuth answer (a proxy's 502). */
const UNREACHABLE_CODES = new Set(['OAUTH_TIMEOUT', 'OAUTH_ABORT', 'OAUTH_RESPONSE_IS_NOT_CONFORM']);

function isNetworkFailure(error: unknown): boolean {
  const { name, code } = error as { name?: string; code?: string };
  if (code !== undefined && UNREACHABLE_CODES.has(code)) return true;
  return (error instanceof TypeError && error.message === 'fetch failed') || name === 'AbortError' || name === 'TimeoutError';
}
