import assert from 'node:assert/strict';
import { FilehavenApiError } from '../../src/client/index.js';

/** Rejects with the FilehavenApiError `call` throws; fails when it resolves or throws anything else. */
export async function failure(call: Promise<unknown>): Promise<FilehavenApiError> {
  const error = await call.then(
    () => assert.fail('expected a failure'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof FilehavenApiError, `not a FilehavenApiError: ${String(error)}`);
  return error;
}
