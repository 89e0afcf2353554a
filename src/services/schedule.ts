/** setTimeout fires at once (with a warning) past this; a longer interval waits in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A running periodic task. */
export interface RunSchedule {
  /** Stops the timer and waits for a run in progress, so the database can close after it. */
  stop(): Promise<void>;
}

/**
 * Runs `task` (gc, the settling of expired reservations) every `intervalMs` (0 = never),
 * the next run timed from the end of the last, so runs never overlap. The timer is unref'd: it never keeps the process alive. Errors
 * go to `onError`, never up.
 */
export function scheduleRuns<T>(
  task: { run(): Promise<T> },
  intervalMs: number,
  hooks: { onReport?: (report: T) => void; onError: (error: unknown) => void },
): RunSchedule {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let stopped = intervalMs <= 0;
  let waited = 0;

  const arm = () => {
    if (stopped) return;
    const step = Math.min(intervalMs - waited, MAX_TIMER_MS);
    timer = setTimeout(() => {
      waited += step;
      if (waited < intervalMs) return arm();
      waited = 0;
      running = task
        .run()
        .then((report) => hooks.onReport?.(report))
        .catch((error: unknown) => {
          try {
            hooks.onError(error);
          } catch {
            // A failing logger must not take the server down.
          }
        })
        .finally(() => {
          running = null;
          arm();
        });
    }, step);
    timer.unref();
  };
  arm();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
