import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { identitiesContract } from './identities.contract.js';
import { postgresHarness } from './metadata-store-harnesses.js';

const skip = await postgresSkipReason();
if (skip) describe('identities contract: PostgreSQL', { skip }, () => {});
else identitiesContract('PostgreSQL', postgresHarness);
