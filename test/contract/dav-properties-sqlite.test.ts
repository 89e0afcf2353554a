import { davPropertiesContract } from './dav-properties.contract.js';
import { sqliteHarness } from './metadata-store-harnesses.js';

davPropertiesContract('SQLite', sqliteHarness);
