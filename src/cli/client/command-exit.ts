/**
 * Exit codes of the user commands (docs/client.md): 0 done, 1 failed, 2 usage,
 * 3 not signed in or the key, login or password refused, 130 interrupted (Ctrl-C).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, interrupted: 130 } as const;

/** A command that has printed its own failure and ends with this exit code. */
export class CommandExit extends Error {
  override name = 'CommandExit';
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}
