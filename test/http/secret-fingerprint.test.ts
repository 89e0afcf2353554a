import assert from 'node:assert/strict';
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openServices } from '../../src/composition.js';
import { type Config, ConfigError, DEFAULTS } from '../../src/config/config.js';
import { freshBackend } from '../helpers/backend.js';

// A data folder remembers (as an HMAC fingerprint in its database) the secret it was set
// up with and refuses another one, instead of letting every stored API key stop working.

test('a data folder refuses a different server secret, and accepts the original again', async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-secret-'));
  const backend = await freshBackend();
  const config = (secret: string | null): Config => ({ ...DEFAULTS, dataDir, ...backend.config, secret });
  try {
    const first = await openServices(config('the-original-secret-0123'));
    const account = await first.accounts.create({ login: 'ada', password: 'correct horse' });
    const key = await first.accounts.apiKeyFor(account);
    await first.close();

    await assert.rejects(openServices(config('another-secret-456789abc')), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /secret differs from the one this data folder was set up with/);
      return true;
    });
    // Forgetting FILEHAVEN_SECRET: a generated <data>/secret is just as wrong.
    await assert.rejects(openServices(config(null)), ConfigError);
    await unlink(path.join(dataDir, 'secret'));

    const again = await openServices(config('the-original-secret-0123'));
    assert.equal((await again.accounts.accountForApiKey(key))?.login, 'ada');
    assert.equal(await again.accounts.apiKeyFor(account), key);
    await again.close();
  } finally {
    await backend.remove();
    await rm(dataDir, { recursive: true, force: true });
  }
});
