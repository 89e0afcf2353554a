import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { downloadCountsContract } from './download-counts.contract.js';
import { postgresHarness } from './metadata-store-harnesses.js';

const skip = await postgresSkipReason();
if (skip) describe('download counts contract: PostgreSQL', { skip }, () => {});
else downloadCountsContract('PostgreSQL', postgresHarness);
