import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loginCandidates } from '../../src/auth/oidc-service.js';
import { oidcSettings } from '../../src/auth/oidc-settings.js';
import { type Config, ConfigError, DEFAULTS } from '../../src/config/config.js';

// Single sign-on settings are checked at start (issue 26): flags that do not go together
// stop the server with a message naming them, and the client secret is never repeated.

const config = (overrides: Partial<Config>): Config => ({ ...DEFAULTS, ...overrides });
const refusal = (overrides: Partial<Config>) => {
  try {
    oidcSettings(config(overrides));
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail('no ConfigError');
};

test('off by default; an issuer needs a client id and the reverse; --oidc-only needs both', () => {
  assert.equal(oidcSettings(DEFAULTS), null);
  assert.match(refusal({ oidcIssuer: 'https://id.example.org' }), /--oidc-issuer is set but --oidc-client-id is not/);
  assert.match(refusal({ oidcClientId: 'files' }), /--oidc-client-id is set but --oidc-issuer is not/);
  assert.match(refusal({ oidcOnly: true }), /--oidc-only needs single sign-on: set --oidc-issuer and --oidc-client-id/);
});

test('the issuer is https, or plain http on the loopback interface only', () => {
  assert.match(refusal({ oidcIssuer: 'http://id.example.org', oidcClientId: 'files' }), /must be an https:\/\/ URL/);
  assert.equal(oidcSettings(config({ oidcIssuer: 'http://127.0.0.1:9000', oidcClientId: 'files' }))?.insecure, true);
  assert.equal(oidcSettings(config({ oidcIssuer: 'https://id.example.org/realms/staff', oidcClientId: 'files' }))?.insecure, false);
});

test('the secret file wins over --oidc-client-secret; none makes a public client; the secret is never in a message', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'oidc-settings-'));
  try {
    const file = path.join(dir, 'secret');
    await writeFile(file, 'from-the-file\n');
    const base = { oidcIssuer: 'https://id.example.org', oidcClientId: 'files' };
    assert.equal(oidcSettings(config({ ...base, oidcClientSecret: 'from-the-flag', oidcClientSecretFile: file }))?.clientSecret, 'from-the-file');
    assert.equal(oidcSettings(config({ ...base, oidcClientSecret: 'from-the-flag' }))?.clientSecret, 'from-the-flag');
    assert.equal(oidcSettings(config(base))?.clientSecret, null);
    const missing = refusal({ ...base, oidcClientSecret: 'from-the-flag', oidcClientSecretFile: path.join(dir, 'nope') });
    assert.match(missing, /cannot read --oidc-client-secret-file/);
    assert.doesNotMatch(missing, /from-the-flag/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('logins for new accounts: from preferred_username, made valid, then unique', () => {
  const first = (claims: { preferredUsername: string | null; email: string | null }, n = 3) => [...loginCandidates(claims)].slice(0, n);
  assert.deepEqual(first({ preferredUsername: 'ada', email: null }), ['ada', 'ada-2', 'ada-3']);
  assert.equal(first({ preferredUsername: 'Zoë Müller', email: null }, 1)[0], 'Zoe-Muller');
  assert.equal(first({ preferredUsername: null, email: 'grace@example.org' }, 1)[0], 'grace');
  assert.equal(first({ preferredUsername: 'admin', email: null }, 1)[0], 'admin-sso');
  assert.equal(first({ preferredUsername: '///', email: null }, 1)[0], 'user');
  const all = [...loginCandidates({ preferredUsername: 'x'.repeat(200), email: null })];
  assert.equal(new Set(all).size, all.length);
  assert.ok(all.every((login) => /^[A-Za-z0-9._@+-]{1,64}$/.test(login)));
});
