/**
 * Clean-up for the bench: everything a run makes (servers, nginx, schemas, buckets,
 * radosgw, folders) registers how to undo it; a section unwinds its own when it ends, a
 * signal unwinds everything. Unwinding is serialised, so a Ctrl-C during a section's own
 * clean-up never runs a step twice or out of order.
 */

const deferred: { what: string; undo: () => Promise<unknown> }[] = [];
let unwinding: Promise<void> = Promise.resolve();

export function defer(what: string, undo: () => Promise<unknown>): void {
  deferred.push({ what, undo });
}

export function unwind(to = 0): Promise<void> {
  unwinding = unwinding.then(async () => {
    while (deferred.length > to) {
      const { what, undo } = deferred.pop()!;
      try {
        await undo();
      } catch (error) {
        console.error(`clean-up failed (${what}): ${(error as Error).message}`);
      }
    }
  });
  return unwinding;
}

/** Runs `work`, then undoes whatever it registered, whether it succeeded or not. */
export async function section<T>(work: () => Promise<T>): Promise<T> {
  const mark = deferred.length;
  try {
    return await work();
  } finally {
    await unwind(mark);
  }
}

/** On a signal, or an error nothing caught, everything is undone before the process ends. */
export function unwindOnExit(): void {
  process.once('uncaughtException', (error) => {
    console.error(error);
    void unwind(0).finally(() => process.exit(1));
  });
  process.once('unhandledRejection', (error) => {
    console.error(error);
    void unwind(0).finally(() => process.exit(1));
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: cleaning up (servers, nginx, schema, bucket, radosgw)...`);
      void unwind(0).finally(() => process.exit(130));
    });
  }
}
