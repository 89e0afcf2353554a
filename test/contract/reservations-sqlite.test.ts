import { sqliteHarness } from './metadata-store-harnesses.js';
import { reservationsContract } from './reservations.contract.js';

reservationsContract('SQLite', sqliteHarness);
