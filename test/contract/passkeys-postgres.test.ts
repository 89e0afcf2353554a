import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { postgresHarness } from './metadata-store-harnesses.js';
import { passkeysContract } from './passkeys.contract.js';

const skip = await postgresSkipReason();
if (skip) describe('passkeys contract: PostgreSQL', { skip }, () => {});
else passkeysContract('PostgreSQL', postgresHarness);
