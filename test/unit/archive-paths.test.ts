import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ArchivePaths, safeSegment } from '../../src/domain/archive-paths.js';

// ZIP entry names (docs/web.md "A folder as one ZIP"): safe to extract, unique in the archive.

describe('safeSegment', () => {
  test('separators, dot segments, drive letters, controls and bidi marks', () => {
    assert.equal(safeSegment('a/b\\c', 'f'), 'a_b_c');
    assert.equal(safeSegment('..', 'f'), '__');
    assert.equal(safeSegment('.', 'f'), '_');
    assert.equal(safeSegment('../../etc/passwd', 'f'), '.._.._etc_passwd');
    assert.equal(safeSegment('C:evil', 'f'), '_C:evil');
    assert.equal(safeSegment('in\u0000vo\u202eice\u0007.txt', 'f'), 'invoice.txt');
    assert.equal(safeSegment('  \u0001 ', 'fallback'), 'fallback');
  });

  test('at most 255 UTF-8 bytes, and a cut never leaves a dot segment', () => {
    assert.equal(Buffer.byteLength(safeSegment('é'.repeat(300), 'f')), 254);
    assert.equal(safeSegment(`..${' '.repeat(300)}x`, 'f'), '__');
  });
});

describe('ArchivePaths', () => {
  test('unique ignoring case and normalisation, the extension kept, folders and files alike', () => {
    const paths = new ArchivePaths();
    assert.equal(paths.claim('', 'Report.pdf', 'f'), 'Report.pdf');
    assert.equal(paths.claim('', 'report.PDF', 'f'), 'report (2).PDF');
    assert.equal(paths.claim('', 'REPORT.pdf', 'f'), 'REPORT (3).pdf');
    assert.equal(paths.claim('', 'Re\u0301sume\u0301', 'f'), 'R\u00e9sum\u00e9');
    assert.equal(paths.claim('', 'R\u00e9sum\u00e9', 'f'), 'R\u00e9sum\u00e9 (2)');
    assert.equal(paths.claim('', 'docs', 'folder'), 'docs');
    assert.equal(paths.claim('', 'docs', 'f'), 'docs (2)');
    assert.equal(paths.claim('docs', 'docs', 'f'), 'docs/docs');
    assert.equal(paths.claim('', '.hidden', 'f'), '.hidden');
    assert.equal(paths.claim('', '.hidden', 'f'), '.hidden (2)');
  });

  test('a numbered name stays within 255 bytes and starts with its stem, however long its extension', () => {
    const paths = new ArchivePaths();
    const longExt = `a.${'x'.repeat(253)}`;
    assert.equal(paths.claim('', longExt, 'f'), longExt);
    const second = paths.claim('', longExt, 'f');
    assert.ok(Buffer.byteLength(second) <= 255, `${Buffer.byteLength(second)} bytes`);
    assert.ok(second.startsWith('a.xxx') && second.endsWith(' (2)'), second);
    // Multi-byte extensions and stems: cut on character boundaries, never over 255 bytes.
    const wide = `${'é'.repeat(100)}.${'日'.repeat(84)}`;
    paths.claim('', wide, 'f');
    const wideSecond = paths.claim('', wide, 'f');
    assert.ok(Buffer.byteLength(wideSecond) <= 255 && !wideSecond.startsWith(' ') && !wideSecond.includes('\uFFFD'), wideSecond);
    // A short extension is still kept after the number, the stem cut instead.
    const longStem = `${'s'.repeat(250)}.pdf`;
    paths.claim('', longStem, 'f');
    const stemSecond = paths.claim('', longStem, 'f');
    assert.ok(stemSecond.endsWith(' (2).pdf') && Buffer.byteLength(stemSecond) === 255, stemSecond);
  });
});
