import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { postgresHarness } from './metadata-store-harnesses.js';
import { sharesContract } from './shares.contract.js';

const skip = await postgresSkipReason();
if (skip) describe('shares contract: PostgreSQL', { skip }, () => {});
else sharesContract('PostgreSQL', postgresHarness);
