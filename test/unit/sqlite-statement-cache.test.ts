import assert from 'node:assert/strict';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { withStatementCache } from '../../src/db/sqlite-statement-cache.js';

test('a SQL text is prepared once and serves any parameters', () => {
  const handle = new SQLite(':memory:');
  const db = withStatementCache(handle);
  try {
    db.prepare('create table t (x integer)').run([]);
    const insert = db.prepare('insert into t (x) values (?)');
    for (let x = 1; x <= 5; x++) {
      assert.equal(db.prepare('insert into t (x) values (?)'), insert);
      insert.run([x]);
    }
    const select = db.prepare('select x from t where x >= ? order by x');
    assert.equal(db.prepare('select x from t where x >= ? order by x'), select);
    assert.deepEqual(select.all([4]), [{ x: 4 }, { x: 5 }]);
    assert.equal(db.prepare('select x from t where x >= ? order by x').all([2]).length, 4);
  } finally {
    db.close();
  }
});

test('the least recently used text leaves a full cache; a busy statement is not handed out twice', () => {
  const handle = new SQLite(':memory:');
  const db = withStatementCache(handle, 2);
  try {
    const a = db.prepare('select 1 as v');
    const b = db.prepare('select 2 as v');
    assert.equal(db.prepare('select 1 as v'), a); // a is now the most recent
    db.prepare('select 3 as v'); // b leaves
    assert.equal(db.prepare('select 1 as v'), a);
    assert.notEqual(db.prepare('select 2 as v'), b);

    db.prepare('create table n (x integer)').run([]);
    for (let x = 0; x < 3; x++) db.prepare('insert into n (x) values (?)').run([x]);
    const iterating = db.prepare('select x from n order by x');
    const rows = (iterating as unknown as { iterate(p: unknown[]): IterableIterator<{ x: number }> }).iterate([]);
    assert.equal(rows.next().value?.x, 0);
    // While the first still iterates, the same text gets a statement of its own.
    const second = db.prepare('select x from n order by x');
    assert.notEqual(second, iterating);
    assert.deepEqual(second.all([]), [{ x: 0 }, { x: 1 }, { x: 2 }]);
    assert.equal(rows.next().value?.x, 1);
    rows.return?.();
  } finally {
    db.close();
  }
});
