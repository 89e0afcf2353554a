import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { davLocksContract } from './dav-locks.contract.js';
import { postgresHarness } from './metadata-store-harnesses.js';

const skip = await postgresSkipReason();
if (skip) describe('WebDAV locks contract: PostgreSQL', { skip }, () => {});
else davLocksContract('PostgreSQL', postgresHarness);
