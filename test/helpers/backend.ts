import { type Config, SETTINGS } from '../../src/config/config.js';
import { createTestSchema, POSTGRES_TEST_URL } from './postgres-test-schema.js';
import type { TestBucket } from './s3-test-bucket.js';

/*
 * The storage setup the tests run on, picked by FILEHAVEN_TEST_BACKEND the way Kysely's
 * tests loop over the dialects an environment variable names (STYLE.md):
 *   sqlite-local (default)  SQLite and blobs in each test's data folder;
 *   postgres-s3             per test server, a fresh schema in FILEHAVEN_TEST_DATABASE_URL
 *                           (postgres-test-schema.ts) and a fresh bucket on
 *                           FILEHAVEN_TEST_S3_ENDPOINT (s3-test-bucket.ts).
 * Run the suite once per value; a test that only makes sense on one of them says so with
 * `{ skip: TEST_BACKEND !== 'sqlite-local' && 'local blob store only' }`.
 */

/** The storage setups the suite runs on. */
export type TestBackend = 'sqlite-local' | 'postgres-s3';

const BACKENDS: readonly TestBackend[] = ['sqlite-local', 'postgres-s3'];

/** The setup of this run: FILEHAVEN_TEST_BACKEND, `sqlite-local` when unset. */
export const TEST_BACKEND: TestBackend = pickBackend(process.env.FILEHAVEN_TEST_BACKEND);

/** Storage made for one test server (or one test), and its removal. */
export interface FreshBackend {
  /** The settings that point a server at it; none on sqlite-local (the data folder is the backend). */
  config: Partial<Config>;
  /** Drops what was made (the schema with every table, the bucket with every object); idempotent. */
  remove(): Promise<void>;
}

/**
 * Fresh, empty storage for TEST_BACKEND. On postgres-s3 the AWS SDK's credential chain is
 * fed from the test S3 environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
 * unless already set), as an operator's environment would be: the server takes no keys in
 * its own settings.
 */
export async function freshBackend(): Promise<FreshBackend> {
  if (TEST_BACKEND === 'sqlite-local') return { config: {}, remove: async () => {} };
  // Loaded only here: the AWS SDK is large, and a run on sqlite-local never needs it.
  const { createTestBucket, s3SkipReason, s3TestEnvironment } = await import('./s3-test-bucket.js');
  const s3 = s3TestEnvironment();
  if (s3 === null) throw new Error(`FILEHAVEN_TEST_BACKEND=postgres-s3 needs an S3 server: ${s3SkipReason() || 'no test S3 environment'}`);
  process.env.AWS_ACCESS_KEY_ID ??= s3.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY ??= s3.secretAccessKey;
  process.env.AWS_REGION ??= 'us-east-1';
  const schema = await createTestSchema();
  let bucket: TestBucket;
  try {
    bucket = await createTestBucket();
  } catch (error) {
    await schema.drop();
    throw error;
  }
  let removed: Promise<void> | undefined;
  return {
    config: {
      databaseUrl: POSTGRES_TEST_URL,
      databaseSchema: schema.schema,
      s3Bucket: bucket.bucket,
      s3Endpoint: s3.endpoint,
      s3ForcePathStyle: true,
      s3Checksums: 'when_required',
    },
    remove() {
      removed ??= Promise.all([schema.drop(), bucket.remove()]).then(() => {});
      return removed;
    },
  };
}

/**
 * The FILEHAVEN_* variables that give a CLI or server process the same settings (`--data`
 * aside), e.g. a FreshBackend's config for `runCli(args, settingsEnv(config))`.
 */
export function settingsEnv(config: Partial<Config>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const setting of SETTINGS) {
    const value = config[setting.key];
    if (value === undefined || value === null) continue;
    env[setting.env] = String(value);
  }
  return env;
}

function pickBackend(raw: string | undefined): TestBackend {
  const value = raw ?? 'sqlite-local';
  if (!(BACKENDS as readonly string[]).includes(value)) {
    throw new Error(`FILEHAVEN_TEST_BACKEND must be one of ${BACKENDS.join(', ')}, not "${value}"`);
  }
  return value as TestBackend;
}
