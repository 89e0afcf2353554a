import assert from 'node:assert/strict';
import { test } from 'node:test';
import { money, parseMoney } from '../../src/domain/money.js';

test('amounts with at most two decimals become cents', () => {
  const cases: [string, number][] = [
    ['12.50', 1250],
    ['12.5', 1250],
    ['12', 1200],
    ['0.07', 7],
    ['-3.00', -300],
    ['+4.01', 401],
    [' 1.10 ', 110],
    ['-0', 0],
    ['9999999999999.99', 999_999_999_999_999],
  ];
  for (const [raw, cents] of cases) assert.equal(parseMoney(raw), cents, raw);
  assert.ok(Object.is(parseMoney('-0.00'), 0), 'no negative zero');
});

test('anything else is refused', () => {
  for (const raw of ['', '.5', '12.', '12.505', '1e3', '1,50', 'abc', '--1', '0x10', 'Infinity', 'NaN', '10000000000000', '12.50 EUR']) {
    assert.equal(parseMoney(raw), null, raw);
  }
});

test('round trip with the GET /account formatter', () => {
  for (const raw of ['0.00', '12.50', '-3.07', '100.00']) assert.equal(money(parseMoney(raw)!), raw);
});
