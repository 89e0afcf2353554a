import { sqliteTwoConnectionsHarness } from './metadata-store-harnesses.js';
import { sharesContract } from './shares.contract.js';

sharesContract('SQLite', sqliteTwoConnectionsHarness);
