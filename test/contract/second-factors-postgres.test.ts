import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { postgresHarness } from './metadata-store-harnesses.js';
import { secondFactorsContract } from './second-factors.contract.js';

const skip = await postgresSkipReason();
if (skip) describe('second factors contract: PostgreSQL', { skip }, () => {});
else secondFactorsContract('PostgreSQL', postgresHarness);
