import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import type { Account } from '../../src/domain/types.js';
import { DavLocks, LockedError, type LockRequest, lockTokenOf, type WriteTarget } from '../../src/webdav/dav-locks.js';
import { parseDavPath } from '../../src/webdav/dav-path.js';
import { contractAccount } from './contract-accounts.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const T0 = Date.parse('2026-11-28T04:30:00Z');

/**
 * The suite every dialect must pass for WebDAV locks (issue 27, RFC 4918 6, 7, 9.10):
 * locks live in the database and two servers (two stores on one database) never grant
 * conflicting ones. Expected outcomes come from the RFC's rules, not from the code:
 * an exclusive lock conflicts with any other lock whose scope overlaps; shared locks
 * coexist; a Depth: infinity lock on a collection covers everything below it; a lock ends
 * at its timeout; each account's tree is its own.
 *
 * The mutation each test catches:
 * - `lock` without `repos.locks.davTree(accountId)`: the race tests fail on PostgreSQL
 *   (both servers read "no lock" before either inserts; SQLite's BEGIN IMMEDIATE
 *   serializes whole transactions and passes either way).
 * - `overlaps` without its last rule (a new deep lock over an existing lock below it):
 *   "a deep lock on a folder and a lock below it" fails.
 * - "/ab" taken for a path below "/a": the sibling checks ("/ab", "/a b", "/fg.txt"). Two
 *   layers keep them apart, `near`'s "<path>/" prefix (dav-locks-repository.ts) and
 *   isWithin in dav-locks.ts, so only breaking both fails them.
 * - the conflict rule as "any overlap" (shared ignored): "shared locks coexist" fails.
 * - `near` or `byToken` without `expires_at > now`: the expiry test fails.
 * - `assertWritable` taking any submitted token, or a token of any account: the
 *   lock-token tests fail.
 */
export function davLocksContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`WebDAV locks contract: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    let now = T0;
    const clock = () => now;
    let logins = 0;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
      now = T0;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    const account = (): Promise<Account> => contractAccount(store, `locker${++logins}`);
    const locksOn = (on: MetadataStore) => new DavLocks({ store: on, clock });
    const request = (path: string, fields: Partial<LockRequest> = {}): LockRequest => ({
      path: parseDavPath(path),
      exclusive: true,
      deep: false,
      ownerXml: '<owner xmlns="DAV:">ada</owner>',
      timeoutSeconds: 600,
      ...fields,
    });
    /** Whether a lock is granted (true) or refused as conflicting (false); anything else fails the test. */
    const granted = async (locks: DavLocks, owner: Account, asked: LockRequest): Promise<boolean> => {
      try {
        await locks.lock(owner, asked);
        return true;
      } catch (error) {
        if (error instanceof LockedError && error.condition === 'no-conflicting-lock') return false;
        throw error;
      }
    };
    const rowsOf = async (owner: Account) => (await store.davLocks.near(owner.id, '/', now)).length;

    test('20 exclusive LOCKs of one path on two servers at once: exactly one is granted', async () => {
      const peer = await harness.openPeer();
      const servers = [locksOn(store), locksOn(peer)];
      const owner = await account();
      for (let round = 0; round < 3; round++) {
        const path = `/race-${round}/doc.txt`;
        const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => granted(servers[i % 2]!, owner, request(path))));
        assert.equal(outcomes.filter(Boolean).length, 1, `round ${round}: ${outcomes.filter(Boolean).length} locks granted`);
      }
      assert.equal(await rowsOf(owner), 3, 'one lock row per path');
    });

    test('deep LOCKs of a folder racing LOCKs of a file below it on two servers: exactly one is granted', async () => {
      const peer = await harness.openPeer();
      const servers = [locksOn(store), locksOn(peer)];
      const owner = await account();
      for (let round = 0; round < 3; round++) {
        // Every pair conflicts: the deep locks share a path and are exclusive, and each covers the file.
        const asked = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? request(`/tree-${round}`, { deep: true }) : request(`/tree-${round}/sub/file.txt`)));
        const outcomes = await Promise.all(asked.map((one, i) => granted(servers[(i >> 1) % 2]!, owner, one)));
        assert.equal(outcomes.filter(Boolean).length, 1, `round ${round}: ${outcomes.filter(Boolean).length} locks granted`);
      }
    });

    test('a deep lock on a folder and a lock below it: each refuses the other; depth 0 covers the folder alone', async () => {
      const locks = locksOn(store);
      const owner = await account();
      assert.equal(await granted(locks, owner, request('/a', { deep: true })), true);
      assert.equal(await granted(locks, owner, request('/a/b/c.txt')), false, 'below a deep exclusive lock');
      assert.equal(await granted(locks, owner, request('/a/b', { exclusive: false })), false, 'a shared lock below a deep exclusive one');
      assert.equal(await granted(locks, owner, request('/a')), false, 'on the same folder');
      assert.equal(await granted(locks, owner, request('/')), true, 'depth 0 on the top does not reach /a');
      assert.equal(await granted(locks, owner, request('/ab/c.txt')), true, '"/ab" is a sibling of "/a", not below it');
      assert.equal(await granted(locks, owner, request('/a b')), true, '"/a b" too');

      assert.equal(await granted(locks, owner, request('/x/y/z.txt')), true);
      assert.equal(await granted(locks, owner, request('/x', { deep: true })), false, 'a deep lock over an existing lock below it');
      assert.equal(await granted(locks, owner, request('/', { deep: true, exclusive: false })), false, 'a deep shared lock on the top over exclusive ones');
      assert.equal(await granted(locks, owner, request('/x')), true, 'a depth 0 lock of /x leaves /x/y/z.txt alone');
      assert.equal(await granted(locks, owner, request('/x/y')), true);

      const refused = await locks.lock(owner, request('/a/b')).catch((error: unknown) => error);
      assert.ok(refused instanceof LockedError);
      assert.deepEqual(
        refused.lockRoots.map((root) => root.text),
        ['/a'],
        'the refusal names the lock in the way',
      );
    });

    test('shared locks coexist (also 20 at once on two servers); shared and exclusive do not', async () => {
      const peer = await harness.openPeer();
      const servers = [locksOn(store), locksOn(peer)];
      const owner = await account();
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => granted(servers[i % 2]!, owner, request('/shared.txt', { exclusive: false }))));
      assert.equal(outcomes.filter(Boolean).length, 20);
      assert.equal((await servers[0]!.discover(owner, parseDavPath('/shared.txt'))).length, 20);
      assert.equal(await granted(servers[1]!, owner, request('/shared.txt')), false, 'exclusive over shared');
      assert.equal(await granted(servers[0]!, owner, request('/only.txt')), true);
      assert.equal(await granted(servers[1]!, owner, request('/only.txt', { exclusive: false })), false, 'shared over exclusive');
      assert.equal(await granted(servers[0]!, owner, request('/dir', { deep: true, exclusive: false })), true);
      assert.equal(await granted(servers[1]!, owner, request('/dir/in.txt', { exclusive: false })), true, 'shared below a deep shared lock');
      assert.equal(await granted(servers[0]!, owner, request('/dir/in.txt')), false, 'exclusive below a deep shared lock');
    });

    test('each account has its own tree: the same path locks in both, and tokens of one open nothing of the other', async () => {
      const locks = locksOn(store);
      const ada = await account();
      const bob = await account();
      const adas = await locks.lock(ada, request('/doc.txt'));
      const bobs = await locks.lock(bob, request('/doc.txt'));
      const path = parseDavPath('/doc.txt');
      const write: WriteTarget[] = [{ path, deep: false }];
      await assert.rejects(locks.assertWritable(ada, write, new Set([lockTokenOf(bobs)])), LockedError, "Bob's token does not open Ada's lock");
      await locks.assertWritable(ada, write, new Set([lockTokenOf(adas)]));
      assert.equal(await locks.unlock(ada, path, lockTokenOf(bobs)), false, "Ada cannot remove Bob's lock");
      assert.equal((await locks.discover(bob, path)).length, 1);
      assert.equal(await locks.refresh(ada, path, new Set([lockTokenOf(bobs)]), 60).then((found) => found.length), 0, 'nor refresh it');
      assert.equal(await locks.unlock(bob, path, lockTokenOf(bobs)), true);
    });

    test('a write needs the token of every lock on what it writes', async () => {
      const locks = locksOn(store);
      const owner = await account();
      const folder = await locks.lock(owner, request('/f', { deep: true, exclusive: false }));
      const file = await locks.lock(owner, request('/f/g/doc.txt', { exclusive: false }));
      const other = await locks.lock(owner, request('/other.txt'));
      const doc = parseDavPath('/f/g/doc.txt');
      const tokens = (...held: string[]) => new Set(held);
      const blocked = (targets: WriteTarget[], held: Set<string>) =>
        locks.assertWritable(owner, targets, held).then(
          () => [] as string[],
          (error: unknown) => {
            assert.ok(error instanceof LockedError && error.condition === 'lock-token-submitted', String(error));
            return error.lockRoots.map((root) => root.text).sort();
          },
        );
      assert.deepEqual(await blocked([{ path: doc, deep: false }], tokens()), ['/f', '/f/g/doc.txt']);
      assert.deepEqual(await blocked([{ path: doc, deep: false }], tokens(lockTokenOf(folder))), ['/f/g/doc.txt']);
      assert.deepEqual(await blocked([{ path: doc, deep: false }], tokens(lockTokenOf(folder), lockTokenOf(file))), []);
      assert.deepEqual(await blocked([{ path: doc, deep: false }], tokens(lockTokenOf(other), 'urn:uuid:00000000-0000-4000-8000-000000000000')), [
        '/f',
        '/f/g/doc.txt',
      ]);
      // A deep write (DELETE of /f/g) reaches the file's lock below it; a shallow one does not.
      assert.deepEqual(await blocked([{ path: parseDavPath('/f/g'), deep: true }], tokens(lockTokenOf(folder))), ['/f/g/doc.txt']);
      assert.deepEqual(await blocked([{ path: parseDavPath('/f/g'), deep: false }], tokens(lockTokenOf(folder))), []);
      assert.deepEqual(await blocked([{ path: parseDavPath('/fg.txt'), deep: false }], tokens()), [], 'nothing locks /fg.txt');
      // A depth-0 lock of a collection guards its members' names (RFC 4918 7.4).
      const top = await locks.lock(owner, request('/d'));
      const member = parseDavPath('/d/new.txt');
      assert.deepEqual(await blocked([{ path: member, deep: false, member: true }], tokens()), ['/d']);
      assert.deepEqual(await blocked([{ path: member, deep: false, member: true }], tokens(lockTokenOf(top))), []);
      assert.deepEqual(await blocked([{ path: member, deep: false }], tokens()), [], 'a write inside an existing member');
      // Several targets (a MOVE's source and destination): every lock counts once.
      assert.deepEqual(
        await blocked(
          [
            { path: doc, deep: false },
            { path: parseDavPath('/other.txt'), deep: false },
          ],
          tokens(lockTokenOf(folder)),
        ),
        ['/f/g/doc.txt', '/other.txt'],
      );
    });

    test('a lock ends at its timeout: gone from discovery and checks, its path free, no refresh; a refresh before keeps it', async () => {
      const locks = locksOn(store);
      const owner = await account();
      const path = parseDavPath('/ends.txt');
      const kept = parseDavPath('/kept.txt');
      const ends = await locks.lock(owner, request('/ends.txt', { timeoutSeconds: 60 }));
      const refreshed = await locks.lock(owner, request('/kept.txt', { timeoutSeconds: 60 }));
      assert.equal(ends.expiresAt, T0 + 60_000);
      now = T0 + 59_999;
      assert.equal(await granted(locks, owner, request('/ends.txt')), false, 'still held a millisecond before');
      const again = await locks.refresh(owner, kept, new Set([lockTokenOf(refreshed)]), 120);
      assert.deepEqual(
        again.map((lock) => [lock.token, lock.expiresAt, lock.timeoutSeconds]),
        [[refreshed.token, now + 120_000, 120]],
      );
      now = T0 + 60_000;
      assert.deepEqual(await locks.discover(owner, path), []);
      await locks.assertWritable(owner, [{ path, deep: false }], new Set());
      assert.deepEqual(await locks.refresh(owner, path, new Set([lockTokenOf(ends)]), 60), [], 'an ended lock is not refreshed');
      assert.equal(await locks.unlock(owner, path, lockTokenOf(ends)), false);
      assert.equal(await granted(locks, owner, request('/ends.txt')), true, 'the path is free again');
      assert.equal((await locks.discover(owner, kept)).length, 1, 'the refreshed lock stands');
      assert.equal(await store.davLocks.purgeExpired(now), 1, 'the ended row is left for housekeeping');
    });

    test('timeouts are bounded: at most an hour, at least a second', async () => {
      const locks = locksOn(store);
      const owner = await account();
      assert.equal((await locks.lock(owner, request('/long', { timeoutSeconds: 10 ** 9 }))).timeoutSeconds, 3600);
      assert.equal((await locks.lock(owner, request('/short', { timeoutSeconds: 0 }))).timeoutSeconds, 1);
    });

    test('discover, refresh and unlock go by what covers the path; forget removes a path and what is under it', async () => {
      const locks = locksOn(store);
      const owner = await account();
      const folder = await locks.lock(owner, request('/c', { deep: true, exclusive: false }));
      now += 1;
      const flat = await locks.lock(owner, request('/c/d', { exclusive: false }));
      const member = parseDavPath('/c/d');
      assert.deepEqual(
        (await locks.discover(owner, member)).map((lock) => lock.token),
        [folder.token, flat.token],
      );
      assert.deepEqual(
        (await locks.discover(owner, parseDavPath('/c'))).map((lock) => lock.token),
        [folder.token],
        'a lock below is no lock of the folder',
      );
      now += 1000;
      // An indirect refresh: the folder's lock through its member (RFC 4918 9.10.2).
      assert.deepEqual(
        (await locks.refresh(owner, member, new Set([lockTokenOf(folder)]), 100)).map((lock) => lock.token),
        [folder.token],
      );
      assert.equal(await locks.unlock(owner, parseDavPath('/elsewhere'), lockTokenOf(folder)), false, 'not through a path it does not cover');
      assert.equal(await locks.unlock(owner, parseDavPath('/c'), lockTokenOf(flat)), false, 'a lock below is not removed through its parent');
      assert.equal(await locks.unlock(owner, member, 'urn:uuid:not-a-uuid'), false);
      assert.equal(await locks.unlock(owner, member, lockTokenOf(folder).toUpperCase().replace('URN:UUID:', 'urn:uuid:')), true, 'UUIDs compare without case');
      assert.equal(await locks.unlock(owner, member, lockTokenOf(folder)), false, 'once');

      // Left: the lock of /c/d; and /c/e/f.txt and /cd.txt, added now.
      await locks.lock(owner, request('/c/e/f.txt'));
      await locks.lock(owner, request('/cd.txt'));
      await locks.forget(owner, parseDavPath('/c'));
      assert.deepEqual(
        (await store.davLocks.near(owner.id, '/', now)).map((lock) => lock.path),
        ['/cd.txt'],
      );
    });
  });
}
