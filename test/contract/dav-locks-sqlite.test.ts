import { davLocksContract } from './dav-locks.contract.js';
import { sqliteHarness } from './metadata-store-harnesses.js';

// One connection for both "servers": a lock's transaction awaits between its statements,
// and a second better-sqlite3 connection waiting for the write lock would block the event
// loop (metadata-store-harnesses.ts).
davLocksContract('SQLite', sqliteHarness);
