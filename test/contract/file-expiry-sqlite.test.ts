import { fileExpiryContract } from './file-expiry.contract.js';
import { sqliteHarness } from './metadata-store-harnesses.js';

fileExpiryContract('SQLite', sqliteHarness);
