import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { davTreeMovesContract } from './dav-tree-moves.contract.js';
import { postgresHarness } from './metadata-store-harnesses.js';

const skip = await postgresSkipReason();
if (skip) describe('WebDAV tree moves contract: PostgreSQL', { skip }, () => {});
else davTreeMovesContract('PostgreSQL', postgresHarness);
