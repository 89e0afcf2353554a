import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { ApiError } from '../../src/domain/errors.js';
import { expiryMoment, parseExpiresIn } from '../../src/domain/expiry.js';
import { LinkPasswordThrottle } from '../../src/limits/link-password-throttle.js';

const wrongParameters = (error: unknown) => error instanceof ApiError && error.code === 'errorWrongParameters' && error.status === 400;

describe('expires_in', () => {
  test('whole seconds from 1 to 100 years are taken; absent is absent', () => {
    assert.deepEqual(parseExpiresIn(undefined, { zeroMeansNever: false }), { kind: 'absent' });
    assert.deepEqual(parseExpiresIn('1', { zeroMeansNever: false }), { kind: 'in', seconds: 1 });
    assert.deepEqual(parseExpiresIn(' 86400 ', { zeroMeansNever: false }), { kind: 'in', seconds: 86400 });
    assert.deepEqual(parseExpiresIn('3153600000', { zeroMeansNever: false }), { kind: 'in', seconds: 3153600000 });
  });

  test('0 means never only where a change allows it', () => {
    assert.deepEqual(parseExpiresIn('0', { zeroMeansNever: true }), { kind: 'never' });
    assert.throws(() => parseExpiresIn('0', { zeroMeansNever: false }), wrongParameters);
  });

  test('negative, fractional, words, empty and huge values are errorWrongParameters', () => {
    for (const raw of ['-1', '1.5', '1e3', 'day', '', ' ', '3153600001', '99999999999999999999', '0x10', '+5']) {
      assert.throws(() => parseExpiresIn(raw, { zeroMeansNever: true }), wrongParameters, raw);
    }
  });

  test('the operator cap refuses never and longer, and is the default when none is set', () => {
    const now = 1_000_000;
    const rules = { now, defaultMs: null, maxMs: 3_600_000, what: 'A share' };
    assert.equal(expiryMoment({ kind: 'absent' }, rules), now + 3_600_000);
    assert.equal(expiryMoment({ kind: 'in', seconds: 60 }, rules), now + 60_000);
    assert.equal(expiryMoment({ kind: 'in', seconds: 3600 }, rules), now + 3_600_000);
    assert.throws(() => expiryMoment({ kind: 'in', seconds: 3601 }, rules), wrongParameters);
    assert.throws(() => expiryMoment({ kind: 'never' }, rules), wrongParameters);
    assert.equal(expiryMoment({ kind: 'absent' }, { now, defaultMs: null, maxMs: null, what: 'A share' }), null);
    assert.equal(expiryMoment({ kind: 'absent' }, { now, defaultMs: 60_000, maxMs: null, what: 'A file' }), now + 60_000);
    assert.equal(expiryMoment({ kind: 'absent' }, { now, defaultMs: 7_200_000, maxMs: 3_600_000, what: 'A file' }), now + 3_600_000);
  });

  test('the settings read durations and never', () => {
    const config = loadConfig(
      { 'share-max-expiry': '30d', 'file-expiry-default': 'never', 'file-expiry-max': '1h', 'share-password-required': 'yes', 'upload-requests': 'off' },
      {},
    );
    assert.equal(config.shareMaxExpiryMs, 30 * 86_400_000);
    assert.equal(config.fileExpiryDefaultMs, null);
    assert.equal(config.fileExpiryMaxMs, 3_600_000);
    assert.equal(config.sharePasswordRequired, true);
    assert.equal(config.uploadRequests, false);
  });
});

describe('link password throttle', () => {
  test('wrong guesses fill the address counter; then even the right password waits', async () => {
    let refusals = 0;
    const throttle = new LinkPasswordThrottle({ perAddressPerMinute: 3, perLinkPerMinute: 30, refused: () => refusals++ });
    const wrong = () => Promise.resolve(false);
    for (let i = 0; i < 3; i++) {
      await assert.rejects(throttle.attempt('LINK', '192.0.2.1', wrong), (e) => e instanceof ApiError && e.code === 'errorSharePassword' && e.status === 401);
    }
    await assert.rejects(
      throttle.attempt('LINK', '192.0.2.1', () => Promise.resolve(true)),
      (e) => e instanceof ApiError && e.code === 'errorSharePassword' && e.status === 429 && Number(e.headers['Retry-After']) >= 1,
    );
    assert.equal(refusals, 1);
    // Another address is not held back by this one's guesses.
    await throttle.attempt('LINK', '192.0.2.2', () => Promise.resolve(true));
  });

  test('guesses from many addresses fill the link counter', async () => {
    const throttle = new LinkPasswordThrottle({ perAddressPerMinute: 100, perLinkPerMinute: 5, refused: () => {} });
    for (let i = 0; i < 5; i++) await assert.rejects(throttle.attempt('LINK', `198.51.100.${i}`, () => Promise.resolve(false)));
    await assert.rejects(
      throttle.attempt('LINK', '198.51.100.200', () => Promise.resolve(true)),
      (e) => e instanceof ApiError && e.status === 429,
    );
    // Another link is unaffected; right passwords give their place back.
    for (let i = 0; i < 10; i++) await throttle.attempt('OTHER', '198.51.100.7', () => Promise.resolve(true));
  });
});
