import { sqliteTwoConnectionsHarness } from './metadata-store-harnesses.js';
import { secondFactorsContract } from './second-factors.contract.js';

secondFactorsContract('SQLite', sqliteTwoConnectionsHarness);
