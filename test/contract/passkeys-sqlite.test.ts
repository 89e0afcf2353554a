import { sqliteTwoConnectionsHarness } from './metadata-store-harnesses.js';
import { passkeysContract } from './passkeys.contract.js';

passkeysContract('SQLite', sqliteTwoConnectionsHarness);
