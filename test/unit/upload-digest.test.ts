import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { bestCheckpoint, KEPT_CHECKPOINTS, parseCheckpoints, ResumableDigest, withCheckpoint } from '../../src/resumable/upload-digest.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

test('a digest saved and resumed, at any cut, in a new hasher, gives the SHA-256 of the whole', async () => {
  const bytes = randomBytes(300_001);
  for (const cut of [0, 1, 63, 64, 65, 4096, 150_000, 300_000, 300_001]) {
    const first = await ResumableDigest.fresh();
    first.update(bytes.subarray(0, cut));
    const saved = JSON.parse(JSON.stringify(first.checkpoint()));
    const resumed = await ResumableDigest.resume(saved);
    assert.ok(resumed);
    assert.equal(resumed.offset, cut);
    resumed.update(bytes.subarray(cut));
    assert.equal(resumed.hex(), sha256(bytes), `cut at ${cut}`);
  }
});

test('an unreadable state resumes as nothing rather than a wrong digest', async () => {
  assert.equal(await ResumableDigest.resume({ at: 10, state: Buffer.from('not a state').toString('base64') }), null);
});

test('checkpoints: malformed JSON reads as none; the newest few are kept; the best is the furthest the stored bytes cover', () => {
  assert.deepEqual(parseCheckpoints('not json'), []);
  assert.deepEqual(parseCheckpoints('{"at":1}'), []);
  assert.deepEqual(parseCheckpoints('[{"at":-1,"state":"a"},{"at":2,"state":"b"},{"at":"3","state":"c"}]'), [{ at: 2, state: 'b' }]);
  let list = parseCheckpoints('[]');
  for (let at = 1; at <= KEPT_CHECKPOINTS + 3; at++) list = withCheckpoint(list, { at: at * 10, state: `s${at}` });
  assert.equal(list.length, KEPT_CHECKPOINTS);
  assert.equal(list.at(-1)?.at, (KEPT_CHECKPOINTS + 3) * 10);
  // A state saved after a rewind (a crash lost bytes past it) replaces those past it.
  list = withCheckpoint(list, { at: 65, state: 'again' });
  assert.deepEqual(list.at(-1), { at: 65, state: 'again' });
  assert.ok(list.every((item) => item.at <= 65));
  assert.equal(bestCheckpoint(list, 64)?.at, 60);
  assert.equal(bestCheckpoint(list, 65)?.at, 65);
  assert.equal(bestCheckpoint(list, 1), null);
});
