import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseBytes, parseDuration } from '../../src/config/units.js';

const KiB = 1024;
const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const TiB = 1024 ** 4;

describe('parseBytes', () => {
  test('reads plain byte counts', () => {
    assert.equal(parseBytes('0'), 0);
    assert.equal(parseBytes('1048576'), 1_048_576);
    assert.equal(parseBytes('1000'), 1000);
    assert.equal(parseBytes('12b'), 12);
    assert.equal(parseBytes('12B'), 12);
  });

  test('reads binary units in any case, with or without a space', () => {
    assert.equal(parseBytes('10GiB'), 10 * GiB);
    assert.equal(parseBytes('10 GiB'), 10 * GiB);
    assert.equal(parseBytes('10gib'), 10 * GiB);
    assert.equal(parseBytes('1KiB'), KiB);
    assert.equal(parseBytes('3MiB'), 3 * MiB);
    assert.equal(parseBytes('2TiB'), 2 * TiB);
    // The most traffic an account holds (account-bounds.ts) is written as its help says it.
    assert.equal(parseBytes('1PiB'), 1024 * TiB);
    assert.equal(parseBytes('5Gi'), 5 * GiB);
    assert.equal(parseBytes('  7k  '), 7 * KiB);
  });

  test('reads KB/MB/GB as decimal units', () => {
    assert.equal(parseBytes('500MB'), 500_000_000);
    assert.equal(parseBytes('1kB'), 1000);
    assert.equal(parseBytes('2GB'), 2_000_000_000);
  });

  test('reads fractions, rounded to whole bytes', () => {
    assert.equal(parseBytes('1.5KiB'), 1536);
    assert.equal(parseBytes('0.5GiB'), GiB / 2);
    assert.equal(parseBytes('1.5'), 2);
  });

  test('unreadable sizes are null', () => {
    for (const bad of ['', ' ', 'abc', 'GiB', '-1', '-1GiB', '10XB', '10 G i B', '10ib', '1e3', '1,5MiB', '10GiBs', '0x10', '1.2.3', 'NaN', 'Infinity']) {
      assert.equal(parseBytes(bad), null, JSON.stringify(bad));
    }
  });

  test('sizes beyond exact integers are null', () => {
    assert.equal(parseBytes('99999999999TiB'), null);
    assert.equal(parseBytes('9'.repeat(30)), null);
  });
});

describe('parseDuration', () => {
  test('reads every unit', () => {
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('90s'), 90_000);
    assert.equal(parseDuration('30m'), 1_800_000);
    assert.equal(parseDuration('24h'), 86_400_000);
    assert.equal(parseDuration('7d'), 604_800_000);
  });

  test('a bare number is seconds; case and spaces do not matter', () => {
    assert.equal(parseDuration('90'), 90_000);
    assert.equal(parseDuration('0'), 0);
    assert.equal(parseDuration(' 2 H '), 7_200_000);
    assert.equal(parseDuration('1.5h'), 5_400_000);
    assert.equal(parseDuration('1.5ms'), 2);
  });

  test('unreadable durations are null', () => {
    for (const bad of ['', ' ', 'h', '-5s', '5w', '5 hours', '1e3', '1h30m', '5sec', 'ms', '.5h', 'NaN']) {
      assert.equal(parseDuration(bad), null, JSON.stringify(bad));
    }
  });

  test('durations beyond exact integers are null, like sizes', () => {
    assert.equal(parseDuration('99999999999999999999d'), null);
    assert.equal(parseDuration('9'.repeat(400)), null);
  });
});
