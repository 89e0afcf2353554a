/**
 * Runs `work` on every item of `items` with at most `limit` at a time, pulling items only
 * as workers free up (the source may be a database cursor over millions of rows). The
 * first failure stops new work, waits for the work in flight, closes the source and is
 * rethrown.
 */
export async function forEachConcurrent<T>(items: AsyncIterable<T>, limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const iterator = items[Symbol.asyncIterator]();
  let failure: { error: unknown } | null = null;
  let done = false;
  const worker = async () => {
    while (!failure && !done) {
      const next = await iterator.next().catch((error: unknown) => {
        failure ??= { error };
        return { done: true, value: undefined } as IteratorReturnResult<undefined>;
      });
      if (next.done) {
        done = true;
        return;
      }
      try {
        await work(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker));
  if (failure) {
    // Releases the cursor (and with it the database connection) the source may hold.
    await iterator.return?.().catch(() => {});
    throw (failure as { error: unknown }).error;
  }
}
