import assert from 'node:assert/strict';
import { test } from 'node:test';
import { terminalText } from '../../src/cli/client/display.js';
import { localFileName } from '../../src/cli/client/local-file-name.js';

// What a hostile or broken server sends must not reach the terminal as control sequences,
// nor the disk as a path or a name too long to hold `.part.json` beside it.

test('terminal text: escape sequences and other control characters become ?, line breaks and tabs stay', () => {
  assert.equal(terminalText('id \u001b]0;PWNED\u0007\u001b[2J end'), 'id ?]0;PWNED??[2J end');
  assert.equal(terminalText('a\tb\nc\r\u009b31m'), 'a\tb\nc??31m');
});

test('local file names: never a path, never hidden, at most 245 bytes, never half a character', () => {
  assert.equal(localFileName('../../etc/passwd', 'ID'), '_.._etc_passwd');
  assert.equal(localFileName('..\\..\\x', 'ID'), '_.._x');
  assert.equal(localFileName('.bashrc', 'ID'), 'bashrc');
  assert.equal(localFileName('\u001b[2J', 'ID'), '[2J');
  assert.equal(localFileName('...', 'ID'), 'ID');
  const long = localFileName('é'.repeat(200), 'ID');
  assert.ok(Buffer.byteLength(long) <= 245 && Buffer.byteLength(`${long}.part.json`) <= 255);
  assert.equal(long, 'é'.repeat(122));
  const emoji = localFileName('😀'.repeat(100), 'ID');
  assert.equal(emoji, '😀'.repeat(61), 'a 4-byte character is kept whole or left out');
});
