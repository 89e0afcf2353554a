import { identitiesContract } from './identities.contract.js';
import { sqliteTwoConnectionsHarness } from './metadata-store-harnesses.js';

identitiesContract('SQLite', sqliteTwoConnectionsHarness);
