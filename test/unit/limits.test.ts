import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addressKey } from '../../src/limits/client-address.js';

describe('addressKey', () => {
  test('IPv4 addresses count one by one, IPv4-mapped IPv6 as IPv4', () => {
    assert.equal(addressKey('203.0.113.7'), '203.0.113.7');
    assert.equal(addressKey('::ffff:203.0.113.7'), '203.0.113.7');
  });

  test('IPv6 addresses count by /64, however they are written', () => {
    const key = addressKey('2001:db8:0:1::1');
    assert.equal(key, '2001:db8:0:1::/64');
    assert.equal(addressKey('2001:0DB8:0000:0001:ffff:ffff:ffff:ffff'), key);
    assert.equal(addressKey('2001:db8::1:0:0:0:5'), key);
    assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
    assert.equal(addressKey('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
    assert.notEqual(addressKey('2001:db8:0:2::1'), key);
  });
});
