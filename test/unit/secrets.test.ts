import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { constantTimeEqual, ServerSecrets } from '../../src/security/secrets.js';

const secrets = new ServerSecrets('first-secret-0123456789');
const other = new ServerSecrets('other-secret-0123456789');
const KEY = 'AbCdEfGhIjKlMnOpQrStUvWxYz012345';

/** Flips one base64 character of `text` at `index` to a different valid one. */
function flipChar(text: string, index: number): string {
  const c = text[index]!;
  return text.slice(0, index) + (c === 'A' ? 'B' : 'A') + text.slice(index + 1);
}

describe('ServerSecrets: sealed API keys', () => {
  test('seal then open gives the key back', () => {
    assert.equal(secrets.openApiKey(secrets.sealApiKey(KEY)), KEY);
    assert.equal(secrets.openApiKey(secrets.sealApiKey('ключ-🔑')), 'ключ-🔑');
  });

  test('sealing is randomised and hides the key', () => {
    const a = secrets.sealApiKey(KEY);
    const b = secrets.sealApiKey(KEY);
    assert.notEqual(a, b);
    assert.ok(!a.includes(KEY));
    assert.ok(!Buffer.from(a, 'base64').includes(Buffer.from(KEY)));
  });

  test('a key sealed under another secret cannot be opened', () => {
    assert.equal(other.openApiKey(secrets.sealApiKey(KEY)), null);
    assert.equal(secrets.openApiKey(other.sealApiKey(KEY)), null);
  });

  test('the same secret in another instance opens it', () => {
    assert.equal(new ServerSecrets('first-secret-0123456789').openApiKey(secrets.sealApiKey(KEY)), KEY);
  });

  test('a tampered box is refused wherever the change is (IV, tag, body)', () => {
    const sealed = secrets.sealApiKey(KEY);
    const raw = Buffer.from(sealed, 'base64');
    for (const index of [0, 11, 12, 27, 28, raw.length - 1]) {
      const bad = Buffer.from(raw);
      bad[index] = bad[index]! ^ 0x01;
      assert.equal(secrets.openApiKey(bad.toString('base64')), null, `byte ${index}`);
    }
    assert.equal(secrets.openApiKey(raw.subarray(0, raw.length - 1).toString('base64')), null);
  });

  test('garbage is refused, not thrown', () => {
    for (const junk of ['', 'AAAA', 'not base64 at all!', Buffer.alloc(64).toString('base64')]) {
      assert.equal(secrets.openApiKey(junk), null, JSON.stringify(junk));
    }
  });
});

describe('ServerSecrets: lookup hashes', () => {
  test('are deterministic per secret and differ between secrets and keys', () => {
    assert.equal(secrets.apiKeyLookup(KEY), secrets.apiKeyLookup(KEY));
    assert.match(secrets.apiKeyLookup(KEY), /^[0-9a-f]{64}$/);
    assert.notEqual(secrets.apiKeyLookup(KEY), other.apiKeyLookup(KEY));
    assert.notEqual(secrets.apiKeyLookup(KEY), secrets.apiKeyLookup(`${KEY}x`));
  });
});

describe('ServerSecrets: signatures', () => {
  const message = 'ABCDEFGHIJ:1795000000';

  test('sign then verify succeeds; signatures are stable and URL-safe', () => {
    const signature = secrets.sign(message);
    assert.equal(secrets.verify(message, signature), true);
    assert.equal(secrets.sign(message), signature);
    assert.match(signature, /^[A-Za-z0-9_-]{32}$/);
  });

  test('a tampered signature fails', () => {
    const signature = secrets.sign(message);
    for (const index of [0, 15, 31]) assert.equal(secrets.verify(message, flipChar(signature, index)), false, `char ${index}`);
    assert.equal(secrets.verify(message, signature.slice(0, -1)), false);
    assert.equal(secrets.verify(message, `${signature}A`), false);
    assert.equal(secrets.verify(message, ''), false);
  });

  test('a signature does not carry over to another message or secret', () => {
    const signature = secrets.sign(message);
    assert.equal(secrets.verify('ABCDEFGHIJ:1795000001', signature), false);
    assert.equal(other.verify(message, signature), false);
  });

  test('signing keys are separate from the lookup key', () => {
    assert.notEqual(secrets.sign(KEY), Buffer.from(secrets.apiKeyLookup(KEY), 'hex').toString('base64url').slice(0, 32));
  });
});

describe('constantTimeEqual', () => {
  test('compares strings of any length', () => {
    assert.equal(constantTimeEqual('abc', 'abc'), true);
    assert.equal(constantTimeEqual('abc', 'abd'), false);
    assert.equal(constantTimeEqual('abc', 'ab'), false);
    assert.equal(constantTimeEqual('', ''), true);
    assert.equal(constantTimeEqual('é', 'e'), false);
  });
});
