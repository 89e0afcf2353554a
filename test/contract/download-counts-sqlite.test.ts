import { downloadCountsContract } from './download-counts.contract.js';
import { sqliteTwoConnectionsHarness } from './metadata-store-harnesses.js';

downloadCountsContract('SQLite', sqliteTwoConnectionsHarness);
