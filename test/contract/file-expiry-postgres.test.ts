import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { fileExpiryContract } from './file-expiry.contract.js';
import { postgresHarness } from './metadata-store-harnesses.js';

const skip = await postgresSkipReason();
if (skip) describe('file expiry in the metadata store: PostgreSQL', { skip }, () => {});
else fileExpiryContract('PostgreSQL', postgresHarness);
