import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decoyHash, hashPassword, verifyPassword } from '../../src/security/passwords.js';

const b64 = (bytes: number, fill = 0) => Buffer.alloc(bytes, fill).toString('base64');

describe('passwords', () => {
  test('hash then verify; a wrong password fails', async () => {
    const stored = await hashPassword('correct horse battery');
    assert.match(stored, /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.equal(await verifyPassword('correct horse battery', stored), true);
    assert.equal(await verifyPassword('correct horse batterY', stored), false);
    assert.equal(await verifyPassword('', stored), false);
  });

  test('hashes are salted', async () => {
    const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);
    assert.notEqual(a, b);
    assert.equal(await verifyPassword('same password', b), true);
  });

  test('passwords are compared after NFC normalisation', async () => {
    const stored = await hashPassword('caf\u00e9-password');
    assert.equal(await verifyPassword('cafe\u0301-password', stored), true);
  });

  test('a malformed stored hash never matches and never throws', async () => {
    const good = await hashPassword('pw-123456');
    const parts = good.split('$');
    const malformed = [
      '',
      'pw-123456',
      'scrypt',
      'scrypt$32768$8$1$salt',
      `bcrypt$32768$8$1$${b64(16)}$${b64(32)}`,
      `scrypt$abc$8$1$${b64(16)}$${b64(32)}`,
      `scrypt$32768$8$1$${b64(16)}$${b64(31)}`,
      `scrypt$32768$8$1$${b64(16)}$`,
      `${good}$extra`,
      // Parameters scrypt itself refuses: N not a power of two, N negative, N zero, r zero.
      `scrypt$3$8$1$${b64(16)}$${b64(32)}`,
      `scrypt$-2$8$1$${b64(16)}$${b64(32)}`,
      `scrypt$0$8$1$${b64(16)}$${b64(32)}`,
      `scrypt$1024$0$1$${b64(16)}$${b64(32)}`,
      // The right shape with the wrong key.
      [...parts.slice(0, 5), b64(32, 7)].join('$'),
    ];
    for (const stored of malformed) {
      assert.equal(await verifyPassword('pw-123456', stored), false, stored);
    }
  });

  test('the decoy hash is a valid hash that nothing guessed matches', async () => {
    const decoy = await decoyHash();
    assert.equal(await decoyHash(), decoy);
    assert.equal(await verifyPassword('', decoy), false);
    assert.equal(await verifyPassword('password', decoy), false);
  });
});
