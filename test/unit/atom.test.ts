import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { atomFeed, entryEl, escapeXml, escapeXmlAttribute, linkEl, rfc822, textEl } from '../../src/http/atom.js';
import { parseAtom } from '../helpers/xml.js';

/** The escaping as it is specified, without the shortcut for text that needs none. */
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const slowEscape = (text: string, marks: RegExp) => text.replace(NOT_XML, '').replace(marks, (c) => ENTITIES[c]!);

describe('escapeXml', () => {
  test('the shortcut for plain text gives what the full escaping gives, for any string', () => {
    // Strings drawn from the characters that matter: markup, controls, lone and paired surrogates, U+FFFE/F.
    const tricky = fc.constantFrom(
      'a',
      'é',
      ' ',
      '&',
      '<',
      '>',
      '"',
      "'",
      '\t',
      '\n',
      '\r',
      '\u0000',
      '\u001f',
      '\ud83d',
      '\ude00',
      '\ud83d\ude00',
      '\ufffe',
      '\uffff',
      '\ufffd',
      '\ud7ff',
      '\ue000',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.array(tricky).map((parts) => parts.join('')),
        ),
        (text) => {
          assert.equal(escapeXml(text), slowEscape(text, /[&<>]/g));
          assert.equal(escapeXmlAttribute(text), slowEscape(text, /[&<>"]/g));
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('escapes the five markup characters', () => {
    assert.equal(escapeXml(`<a href="x">Tom & Jerry's</a>`), `&lt;a href="x"&gt;Tom &amp; Jerry's&lt;/a&gt;`);
    assert.equal(escapeXmlAttribute(`<a href="x">Tom & Jerry's</a>`), `&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry's&lt;/a&gt;`);
    assert.equal(escapeXml('&amp;'), '&amp;amp;');
  });

  test('renders numbers', () => {
    assert.equal(escapeXml(42), '42');
    assert.equal(escapeXml(0), '0');
  });

  test('drops the C0 controls XML 1.0 cannot carry but keeps tab, LF and CR', () => {
    assert.equal(escapeXml('a\u0000b\u0001c\u0008d\u000be\u000cf\u000eg\u001fh'), 'abcdefgh');
    assert.equal(escapeXml('a\tb\nc\rd'), 'a\tb\nc\rd');
  });

  test('drops U+FFFE and U+FFFF', () => {
    assert.equal(escapeXml('a\ufffeb\uffffc'), 'abc');
  });

  test('drops lone surrogates but keeps pairs', () => {
    assert.equal(escapeXml('a\ud800b'), 'ab');
    assert.equal(escapeXml('a\udc00b'), 'ab');
    assert.equal(escapeXml('end\ud83d'), 'end');
    assert.equal(escapeXml('\ude00start'), 'start');
    assert.equal(escapeXml('😀 \ud83d\ude00'), '😀 😀');
    // Reversed pair: both halves are lone.
    assert.equal(escapeXml('\ude00\ud83d'), '');
  });

  test('keeps other Unicode, including C1 controls XML 1.0 allows', () => {
    assert.equal(escapeXml('Ünïcødé 文件 \u0085 \u202e'), 'Ünïcødé 文件 \u0085 \u202e');
  });
});

describe('rfc822', () => {
  test('formats as the golden date: weekday, two-digit day, numeric zone', () => {
    assert.equal(rfc822(new Date(Date.UTC(2026, 10, 21, 10, 4, 5))), 'Sat, 21 Nov 2026 10:04:05 +0000');
    assert.equal(rfc822(new Date(Date.UTC(2026, 2, 2, 0, 0, 0))), 'Mon, 02 Mar 2026 00:00:00 +0000');
    assert.equal(rfc822(new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 999))), 'Fri, 31 Dec 1999 23:59:59 +0000');
  });

  test('is always UTC, whatever the instant', () => {
    assert.match(rfc822(new Date()), /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
  });
});

describe('atomFeed', () => {
  const base = {
    title: 'File info',
    id: 'http://api.example.com/files/ABCDEFGHIJ',
    updated: new Date(Date.UTC(2026, 10, 21, 10, 4, 5)),
    author: 'http://example.com',
    namespace: 'http://example.com/ed',
    selfPath: '/files/ABCDEFGHIJ',
  };

  test('renders the fixed layout byte for byte', () => {
    const xml = atomFeed({
      ...base,
      entries: [entryEl(textEl('id', 'ABCDEFGHIJ'), textEl('title', ''), linkEl(['rel', 'enclosure'], ['href', 'http://x/a?b=1&c=2'], ['length', 5]))],
    });
    assert.equal(
      xml,
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:ed="http://example.com/ed">',
        '  <title>File info</title>',
        '  <id>http://api.example.com/files/ABCDEFGHIJ</id>',
        '  <updated>Sat, 21 Nov 2026 10:04:05 +0000</updated>',
        '  <author>',
        '    <name>http://example.com</name>',
        '  </author>',
        '  <entry>',
        '    <id>ABCDEFGHIJ</id>',
        '    <title></title>',
        '    <link rel="enclosure" href="http://x/a?b=1&amp;c=2" length="5"/>',
        '  </entry>',
        '  <link rel="self" href="/files/ABCDEFGHIJ"/>',
        '</feed>',
        '',
      ].join('\n'),
    );
  });

  test('hostile text still makes well-formed XML that reads back as the cleaned text', () => {
    const nasty = `a<b>&"c'\u0000\u0001\ud800\uffff😀\u202ez`;
    const xml = atomFeed({ ...base, entries: [entryEl(textEl('title', nasty), linkEl(['href', nasty]))] });
    const feed = parseAtom(xml);
    assert.equal(feed.feed.entry.title, `a<b>&"c'😀\u202ez`);
    assert.equal(feed.feed.entry.link['@href'], `a<b>&"c'😀\u202ez`);
  });
});
