import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/domain/errors.js';
import { decodeCursor, encodeCursor } from '../../src/http/api/page-cursor.js';

const isBadRequest = (error: unknown) => error instanceof ApiError && error.code === 'errorBadRequest' && error.status === 400;

test('a cursor round-trips its position and is URL-safe', () => {
  for (const position of [
    { createdAt: 0, id: 'AAAAAAAAAA' },
    { createdAt: 1795226173258, id: 'K7Q2M9X4PA' },
    { createdAt: Number.MAX_SAFE_INTEGER, id: 'ZZZZZZZZZZ' },
  ]) {
    const files = encodeCursor('files', position);
    assert.match(files, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeCursor('files', files), position);
    assert.deepEqual(decodeCursor('folders', encodeCursor('folders', position)), position);
  }
});

test('anything else is errorBadRequest: other kind, junk, non-canonical, out of range', () => {
  const good = encodeCursor('files', { createdAt: 5, id: 'K7Q2M9X4PA' });
  const b64 = (text: string) => Buffer.from(text).toString('base64url');
  for (const cursor of [
    encodeCursor('folders', { createdAt: 5, id: 'K7Q2M9X4PA' }),
    '',
    '====',
    'a+b/',
    `${good}=`,
    good.slice(0, -1),
    'x'.repeat(200),
    b64('f:5:k7q2m9x4pa'),
    b64('f:05:K7Q2M9X4PA'),
    b64('f:9007199254740993:K7Q2M9X4PA'),
    b64('f::K7Q2M9X4PA'),
    b64('f:5:K7Q2M9X4PA\n'),
  ]) {
    assert.throws(() => decodeCursor('files', cursor), isBadRequest, JSON.stringify(cursor));
  }
});
