import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pageCspAddition, previewCsp, previewOf } from '../../src/http/web/preview.js';

// The preview allowlist (src/http/web/preview.ts): decided from the stored name's extension.

test('raster images, audio, video, text-like files and PDF have a preview with their exact type', () => {
  const expected: Record<string, [string, string]> = {
    'a.png': ['image', 'image/png'],
    'a.JPG': ['image', 'image/jpeg'],
    'a.jpeg': ['image', 'image/jpeg'],
    'a.gif': ['image', 'image/gif'],
    'a.webp': ['image', 'image/webp'],
    'a.avif': ['image', 'image/avif'],
    'a.bmp': ['image', 'image/bmp'],
    'a.mp3': ['audio', 'audio/mpeg'],
    'a.ogg': ['audio', 'audio/ogg'],
    'a.wav': ['audio', 'audio/wav'],
    'a.m4a': ['audio', 'audio/mp4'],
    'a.flac': ['audio', 'audio/x-flac'],
    'a.mp4': ['video', 'video/mp4'],
    'a.webm': ['video', 'video/webm'],
    'a.ogv': ['video', 'video/ogg'],
    'a.pdf': ['pdf', 'application/pdf'],
  };
  for (const [name, [kind, type]] of Object.entries(expected)) {
    assert.deepEqual([previewOf(name)?.kind, previewOf(name)?.contentType], [kind, type], name);
  }
  for (const name of ['notes.txt', 'README.md', 'table.csv', 'server.log', 'data.json', 'config.yaml', 'list.tsv']) {
    assert.equal(previewOf(name)?.contentType, 'text/plain; charset=utf-8', name);
  }
});

test('documents that can run script, and everything unknown, have none', () => {
  for (const name of [
    'a.svg',
    'a.svgz',
    'a.html',
    'a.htm',
    'a.xhtml',
    'a.xml',
    'a.js',
    'a.mjs',
    'a.css',
    'a.exe',
    'a.swf',
    'a.zip',
    'a.ts',
    'a',
    'a.png.html',
  ]) {
    assert.equal(previewOf(name), null, name);
  }
});

test('preview responses are sandboxed and load nothing but themselves', () => {
  assert.equal(previewCsp('text'), "sandbox; default-src 'none'; frame-ancestors 'self'");
  assert.equal(previewCsp('pdf'), "sandbox; default-src 'none'; frame-ancestors 'self'");
  assert.equal(previewCsp('image'), "sandbox; default-src 'none'; img-src 'self'; frame-ancestors 'self'");
  assert.equal(previewCsp('video'), "sandbox allow-same-origin; default-src 'none'; media-src 'self'; frame-ancestors 'self'");
  for (const kind of ['image', 'audio', 'video', 'text', 'pdf'] as const) assert.ok(!previewCsp(kind).includes('allow-scripts'));
  assert.equal(pageCspAddition('image'), '');
  assert.equal(pageCspAddition('audio'), "media-src 'self'");
  assert.equal(pageCspAddition('pdf'), "frame-src 'self'");
});
