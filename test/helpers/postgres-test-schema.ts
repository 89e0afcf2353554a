import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL the tests use: FILEHAVEN_TEST_DATABASE_URL, or the machine's local server. */
export const POSTGRES_TEST_URL = process.env.FILEHAVEN_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let reachable: Promise<string | null> | undefined;

/**
 * Why PostgreSQL tests cannot run here (a message naming what is missing), or false.
 * With CI=true a missing server is a failure, not a skip: CI must run them.
 */
export async function postgresSkipReason(): Promise<string | false> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_TEST_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('select 1');
      return null;
    } catch (error) {
      return (error as Error).message || String((error as { code?: string }).code ?? error);
    } finally {
      await client.end().catch(() => {});
    }
  })();
  const problem = await reachable;
  if (problem === null) return false;
  return skipOrFail(`PostgreSQL tests skipped: no server at ${POSTGRES_TEST_URL} (${problem}); set FILEHAVEN_TEST_DATABASE_URL`);
}

/**
 * The `skip` reason of tests whose service is missing; with CI=true a failure instead, so
 * that CI never passes without running them.
 */
export function skipOrFail(reason: string): string {
  if (process.env.CI === 'true') throw new Error(`${reason}. CI=true: these tests must run`);
  return reason;
}

/** A fresh, empty schema for one test (or one server), dropped with everything in it by drop(). */
export async function createTestSchema(): Promise<{ schema: string; drop(): Promise<void> }> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL });
  await client.connect();
  try {
    await client.query(`create schema "${schema}"`);
  } finally {
    await client.end();
  }
  return {
    schema,
    async drop() {
      const dropper = new pg.Client({ connectionString: POSTGRES_TEST_URL });
      await dropper.connect();
      try {
        await dropper.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await dropper.end();
      }
    },
  };
}
