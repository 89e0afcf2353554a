import { readFileSync } from 'node:fs';
import { type Config, ConfigError } from '../config/config.js';

/** Single sign-on as configured (issue 26): checked once at start. */
export interface OidcSettings {
  /** The issuer URL discovery starts from (`/.well-known/openid-configuration` under it). */
  issuer: URL;
  clientId: string;
  /** The client secret; null for a public client (PKCE alone, no client authentication). */
  clientSecret: string | null;
  /** The button's label: "Sign in with <name>". */
  name: string;
  /** The scopes asked for, `openid` always among them. */
  scopes: string;
  /** Whether a new identity gets a new account (`--oidc-signup`). */
  signup: boolean;
  /** Whether password sign-in is for operators only (`--oidc-only`). */
  only: boolean;
  /** Plain HTTP to the issuer: allowed only on the loopback interface (a provider on the same host). */
  insecure: boolean;
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * The single sign-on settings, or null when single sign-on is off. A ConfigError names the
 * flags when they do not go together: an issuer without a client id or the reverse, or
 * `--oidc-only` without an issuer (nobody but operators could sign in). The secret file,
 * when given, is read now and wins over `--oidc-client-secret`; the secret is never shown.
 */
export function oidcSettings(config: Config): OidcSettings | null {
  const { oidcIssuer, oidcClientId } = config;
  if (oidcIssuer === null && oidcClientId === null) {
    if (config.oidcOnly) throw new ConfigError('--oidc-only needs single sign-on: set --oidc-issuer and --oidc-client-id too');
    return null;
  }
  if (oidcIssuer === null) throw new ConfigError('--oidc-client-id is set but --oidc-issuer is not: set both, or neither');
  if (oidcClientId === null) throw new ConfigError('--oidc-issuer is set but --oidc-client-id is not: set both, or neither');
  let issuer: URL;
  try {
    issuer = new URL(oidcIssuer);
  } catch {
    throw new ConfigError('invalid --oidc-issuer: expected the issuer URL, such as https://id.example.org/realms/staff');
  }
  const insecure = issuer.protocol === 'http:' && LOOPBACK.has(issuer.hostname);
  if (issuer.protocol !== 'https:' && !insecure) {
    throw new ConfigError('invalid --oidc-issuer: the issuer must be an https:// URL (plain http only on 127.0.0.1, ::1 or localhost)');
  }
  const scopes = config.oidcScopes.split(/\s+/).filter(Boolean);
  if (!scopes.includes('openid')) scopes.unshift('openid');
  return {
    issuer,
    clientId: oidcClientId,
    clientSecret: clientSecret(config),
    name: config.oidcName.trim() || 'single sign-on',
    scopes: scopes.join(' '),
    signup: config.oidcSignup,
    only: config.oidcOnly,
    insecure,
  };
}

function clientSecret(config: Config): string | null {
  if (config.oidcClientSecretFile !== null) {
    let text: string;
    try {
      text = readFileSync(config.oidcClientSecretFile, 'utf8').trim();
    } catch (error) {
      throw new ConfigError(`cannot read --oidc-client-secret-file ${config.oidcClientSecretFile}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    }
    if (text === '') throw new ConfigError(`--oidc-client-secret-file ${config.oidcClientSecretFile} is empty`);
    return text;
  }
  return config.oidcClientSecret === null || config.oidcClientSecret === '' ? null : config.oidcClientSecret;
}
