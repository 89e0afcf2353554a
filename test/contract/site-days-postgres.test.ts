import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { postgresHarness } from './metadata-store-harnesses.js';
import { siteDaysContract } from './site-days.contract.js';

const skip = await postgresSkipReason();
if (skip) describe('site days: PostgreSQL', { skip }, () => {});
else siteDaysContract('PostgreSQL', postgresHarness);
