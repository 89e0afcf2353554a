import { sqliteHarness } from './metadata-store-harnesses.js';
import { uploadRequestSlotsContract } from './upload-request-slots.contract.js';

uploadRequestSlotsContract('SQLite', sqliteHarness);
