import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { postgresHarness } from './metadata-store-harnesses.js';
import { operatorQueriesContract } from './operator-queries.contract.js';

const skip = await postgresSkipReason();
if (skip) describe('operator queries: PostgreSQL', { skip }, () => {});
else operatorQueriesContract('PostgreSQL', postgresHarness);
