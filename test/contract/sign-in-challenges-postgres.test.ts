import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { postgresHarness } from './metadata-store-harnesses.js';
import { signInChallengesContract } from './sign-in-challenges.contract.js';

const skip = await postgresSkipReason();
if (skip) describe('sign-in challenges contract: PostgreSQL', { skip }, () => {});
else signInChallengesContract('PostgreSQL', postgresHarness);
