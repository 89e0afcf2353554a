import { sqliteTwoConnectionsHarness } from './metadata-store-harnesses.js';
import { siteDaysContract } from './site-days.contract.js';

siteDaysContract('SQLite', sqliteTwoConnectionsHarness);
