import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rememberRecent } from '../../src/domain/remember-recent.js';

test('rememberRecent: computes each input once while it is among the recent ones, and holds at most capacity', () => {
  const computed: string[] = [];
  const digest = rememberRecent((input: string) => {
    computed.push(input);
    return `#${input}`;
  }, 3);
  assert.equal(digest('a'), '#a');
  assert.equal(digest('a'), '#a');
  assert.deepEqual(computed, ['a']);
  digest('b');
  digest('c');
  digest('d'); // a, the oldest, leaves
  assert.deepEqual(computed, ['a', 'b', 'c', 'd']);
  assert.equal(digest('b'), '#b');
  assert.equal(digest('a'), '#a'); // computed again
  assert.deepEqual(computed, ['a', 'b', 'c', 'd', 'a']);
});
