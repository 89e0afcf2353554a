import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { postgresHarness } from './metadata-store-harnesses.js';
import { reservationsContract } from './reservations.contract.js';

const skip = await postgresSkipReason();
if (skip) describe('reservations contract: PostgreSQL', { skip }, () => {});
else reservationsContract('PostgreSQL', postgresHarness);
