import { sqliteHarness } from './metadata-store-harnesses.js';
import { operatorQueriesContract } from './operator-queries.contract.js';

operatorQueriesContract('SQLite', sqliteHarness);
