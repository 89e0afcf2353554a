import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sanitizeFileName, sanitizeFolderName, truncateUtf8 } from '../../src/domain/names.js';

const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8');

describe('sanitizeFileName', () => {
  test('keeps an ordinary name as it is', () => {
    assert.equal(sanitizeFileName('report 2026 (final).pdf'), 'report 2026 (final).pdf');
    assert.equal(sanitizeFileName('Ünïcødé 文件.txt'), 'Ünïcødé 文件.txt');
  });

  test('strips directories of either separator', () => {
    assert.equal(sanitizeFileName('a/b/c.txt'), 'c.txt');
    assert.equal(sanitizeFileName('C:\\Users\\me\\evil.exe'), 'evil.exe');
    assert.equal(sanitizeFileName('../../etc/passwd'), 'passwd');
    assert.equal(sanitizeFileName('/absolute/path/x'), 'x');
    assert.equal(sanitizeFileName('mixed\\dirs/and\\name.bin'), 'name.bin');
  });

  test('`.`, `..`, empty and missing names become "file"', () => {
    for (const raw of ['..', '.', '', '   ', 'dir/', 'a/..', 'a\\..', '..\u0000', '.\u202e.', ' .. ', null, undefined]) {
      assert.equal(sanitizeFileName(raw), 'file', JSON.stringify(raw));
    }
  });

  test('names merely made of dots are not `..`', () => {
    assert.equal(sanitizeFileName('...'), '...');
    assert.equal(sanitizeFileName('..hidden'), '..hidden');
  });

  test('strips C0, DEL and C1 control characters', () => {
    assert.equal(sanitizeFileName('a\u0000b\u0001c\td\ne\rf\u001f.txt'), 'abcdef.txt');
    assert.equal(sanitizeFileName('x\u007fy\u0080z\u009f.bin'), 'xyz.bin');
  });

  test('strips bidi embeddings, overrides and isolates', () => {
    // The classic disguise: displays as "invoiceexe.pdf".
    assert.equal(sanitizeFileName('invoice\u202efdp.exe'), 'invoicefdp.exe');
    assert.equal(sanitizeFileName('\u202a\u202b\u202c\u202d\u202ename\u2066\u2067\u2068\u2069.txt'), 'name.txt');
  });

  test('trims surrounding white space, also once controls are gone', () => {
    assert.equal(sanitizeFileName('  padded.txt  '), 'padded.txt');
    assert.equal(sanitizeFileName('\u0000 padded.txt \u202e'), 'padded.txt');
  });

  test('cuts to 255 bytes of UTF-8', () => {
    assert.equal(sanitizeFileName('a'.repeat(300)), 'a'.repeat(255));
    assert.equal(sanitizeFileName('a'.repeat(255)), 'a'.repeat(255));
  });

  test('the 255-byte cut never splits a character', () => {
    // 2-byte characters: 127 fit (254 bytes), the 128th would make 256.
    const twoByte = sanitizeFileName('é'.repeat(200));
    assert.equal(twoByte, 'é'.repeat(127));
    // 3-byte characters: 85 fit exactly.
    assert.equal(sanitizeFileName('文'.repeat(100)), '文'.repeat(85));
    // 4-byte characters (surrogate pairs in JS): 63 fit (252 bytes), no half pair left.
    const emoji = sanitizeFileName('😀'.repeat(100));
    assert.equal(emoji, '😀'.repeat(63));
    assert.doesNotMatch(emoji, /[\ud800-\udbff](?![\udc00-\udfff])/);
    // A prefix that leaves one byte free before a multi-byte character.
    const mixed = sanitizeFileName(`${'a'.repeat(253)}😀tail`);
    assert.equal(mixed, 'a'.repeat(253));
    for (const name of [twoByte, emoji, mixed]) {
      assert.ok(utf8Length(name) <= 255);
      assert.equal(Buffer.from(name, 'utf8').toString('utf8'), name);
    }
  });

  test('folder names follow the same character rules, with "folder" for an empty one', () => {
    assert.equal(sanitizeFolderName('  My\u202e folder\u0000 '), 'My folder');
    assert.equal(sanitizeFolderName(''), 'folder');
    assert.equal(sanitizeFolderName(null), 'folder');
    assert.equal(utf8Length(sanitizeFolderName('é'.repeat(200))), 254);
  });
});

describe('truncateUtf8', () => {
  test('returns short text unchanged and cuts long text on a code point', () => {
    assert.equal(truncateUtf8('abc', 3), 'abc');
    assert.equal(truncateUtf8('abcd', 3), 'abc');
    assert.equal(truncateUtf8('aé', 2), 'a');
    assert.equal(truncateUtf8('😀', 3), '');
    assert.equal(truncateUtf8('😀x', 4), '😀');
  });
});
