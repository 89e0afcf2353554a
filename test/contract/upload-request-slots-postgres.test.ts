import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { postgresHarness } from './metadata-store-harnesses.js';
import { uploadRequestSlotsContract } from './upload-request-slots.contract.js';

const skip = await postgresSkipReason();
if (skip) describe('upload request slots contract: PostgreSQL', { skip }, () => {});
else uploadRequestSlotsContract('PostgreSQL', postgresHarness);
