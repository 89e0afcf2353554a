import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { matchesNamePattern, namePatternProblem, normalizeNamePattern } from '../../src/domain/name-patterns.js';

describe('blacklist name patterns', () => {
  const cases: [pattern: string, name: string, matches: boolean][] = [
    ['*.exe', 'setup.exe', true],
    ['*.exe', 'Setup.EXE', true],
    ['*.EXE', 'setup.exe', true],
    ['*.exe', 'setup.exe.txt', false],
    ['*.exe', '.exe', true],
    ['cracked-*', 'cracked-game.zip', true],
    ['cracked-*', 'my-cracked-game.zip', false],
    ['cracked-*', 'cracked-', true],
    ['file?.bin', 'file1.bin', true],
    ['file?.bin', 'file.bin', false],
    ['file?.bin', 'file12.bin', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'axxbyyc', true],
    ['a*b*c', 'axxbyy', false],
    ['a*b*c', 'acb', false],
    ['*a*a*a*a*a*a*a*a*b', 'a'.repeat(255), false],
    ['exact.txt', 'EXACT.TXT', true],
    ['exact.txt', 'exact.txt ', false],
    // Wildcards count characters, not UTF-16 units.
    ['?.jpg', '😀.jpg', true],
    ['r?sum?.pdf', 'RÉSUMÉ.pdf', true],
    ['résumé.pdf', 'Re\u0301sume\u0301.pdf', true],
    // Regex metacharacters mean themselves.
    ['a+b(1).[x]', 'a+b(1).[x]', true],
    ['a.b', 'axb', false],
  ];
  for (const [pattern, name, expected] of cases) {
    test(`${JSON.stringify(pattern)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(name)}`, () => {
      assert.equal(matchesNamePattern(pattern, name), expected);
    });
  }

  test('a hostile pattern against a long name finishes quickly (no exponential backtracking)', () => {
    const started = process.hrtime.bigint();
    matchesNamePattern(`${'*a'.repeat(100)}b`, 'a'.repeat(255));
    assert.ok(process.hrtime.bigint() - started < 500_000_000n);
  });

  test('normalised to trimmed lower case', () => {
    assert.equal(normalizeNamePattern('  *.EXE '), '*.exe');
  });

  test('unusable patterns are named', () => {
    assert.match(namePatternProblem('')!, /must not be empty/);
    assert.match(namePatternProblem('*')!, /besides \* and \?/);
    assert.match(namePatternProblem('?*?')!, /besides \* and \?/);
    assert.match(namePatternProblem('dir/*.exe')!, /cannot hold "\/"/);
    assert.match(namePatternProblem('a\\b')!, /cannot hold/);
    assert.match(namePatternProblem('tab\there')!, /control characters/);
    assert.match(namePatternProblem('x'.repeat(256))!, /at most 255/);
    assert.equal(namePatternProblem('*.exe'), null);
  });
});
