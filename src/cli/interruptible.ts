import { InputError } from '../domain/errors.js';

/**
 * Runs `work` with SIGINT and SIGTERM turned into an abort of its signal; if it then
 * fails, the operator reads `interrupted(reason)`: what the interruption left behind.
 */
export async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>, interrupted: (reason: string) => string): Promise<T> {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => controller.abort(signal);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await work(controller.signal);
  } catch (error) {
    if (controller.signal.aborted) throw new InputError(interrupted(String(controller.signal.reason)));
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
