import { describe } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { davPropertiesContract } from './dav-properties.contract.js';
import { postgresHarness } from './metadata-store-harnesses.js';

const skip = await postgresSkipReason();
if (skip) describe('WebDAV dead properties contract: PostgreSQL', { skip }, () => {});
else davPropertiesContract('PostgreSQL', postgresHarness);
