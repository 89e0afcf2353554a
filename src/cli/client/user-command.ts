import type { ParseArgsConfig } from 'node:util';
import { FilehavenApiError, FilehavenClient, FilehavenConnectionError } from '../../client/index.js';
import { parseStrict, UsageError } from '../args.js';
import { clientConfigPath, readStoredLogin, uploadStatePath } from './client-config.js';
import { CommandExit, EXIT } from './command-exit.js';
import { terminalText } from './display.js';

/*
 * What every user command shares: strict flags (`--server`, `--json`), the client built
 * from flag, environment and config file, Ctrl-C as an abort, and one way of reporting
 * results and failures: a human text, or with --json exactly one JSON document on stdout
 * (`{"error": {...}}` on failure, beside the human line on stderr).
 */

type Options = NonNullable<ParseArgsConfig['options']>;

/** Flags every user command takes. */
const COMMON: Options = { server: { type: 'string' }, json: { type: 'boolean' } };

/** No server or key to talk to: exit 3, like a refused key. */
export class NotSignedInError extends Error {
  override name = 'NotSignedInError';
}

/** What a command hands back to be printed. */
export interface Outcome {
  /** Text for people (stdout); nothing when undefined. */
  human?: string;
  /** The JSON document of --json. */
  json: unknown;
  /** Non-zero when some of the work failed (already reported through `warn`). */
  exitCode?: number;
}

export interface UserCommand {
  /** Positional arguments. */
  positionals: string[];
  /** Flags as parsed. */
  values: Record<string, string | boolean | undefined>;
  /** Whether --json was given. */
  json: boolean;
  /** Aborted by Ctrl-C or SIGTERM. */
  signal: AbortSignal;
  /** The signed-in client (FILEHAVEN_SERVER/FILEHAVEN_KEY beat the config file; --server beats both). */
  client(options?: { key?: boolean; fallbackServer?: string }): Promise<FilehavenClient>;
  /** Reports one failure among several (a file of an upload) on stderr, as `fail` would. */
  warn(error: unknown, what?: string): number;
}

/** Whether two server URLs are the same server (the stored key only goes to its own). */
export function sameServer(a: string, b: string): boolean {
  try {
    const [x, y] = [new URL(a), new URL(b)];
    return x.origin === y.origin && x.pathname.replace(/\/+$/, '') === y.pathname.replace(/\/+$/, '');
  } catch {
    return false;
  }
}

/** Where the server and key come from: --server, then FILEHAVEN_SERVER/FILEHAVEN_KEY, then the config file. */
export async function resolveLogin(
  flagServer: string | undefined,
  needKey: boolean,
  fallbackServer?: string,
): Promise<{ server: string; key: string | undefined }> {
  const stored = await readStoredLogin();
  const server = flagServer ?? (process.env.FILEHAVEN_SERVER || undefined) ?? stored?.server ?? fallbackServer;
  if (!server) throw new NotSignedInError(`not signed in: run filehaven login --server URL (or set FILEHAVEN_SERVER and FILEHAVEN_KEY)`);
  // The stored key belongs to the stored server: it is never sent to another one.
  const key = (process.env.FILEHAVEN_KEY || undefined) ?? (stored && sameServer(stored.server, server) ? stored.key : undefined);
  if (needKey && !key) throw new NotSignedInError(`not signed in to ${server}: run filehaven login --server ${server} (or set FILEHAVEN_KEY)`);
  return { server, key };
}

function exitCodeOf(error: unknown): number {
  if (error instanceof NotSignedInError) return EXIT.auth;
  // A share's wrong password is a 401 too, but not the account's: a plain failure.
  if (error instanceof FilehavenApiError && error.code !== 'errorSharePassword' && (error.status === 401 || error.code === 'errorWrongCredentials'))
    return EXIT.auth;
  return EXIT.failed;
}

/** The one line a failure prints: the SPEC code and message, and what to do when that is clear. */
function describe(error: unknown): string {
  if (error instanceof FilehavenApiError) {
    const hints: string[] = [];
    if (error.status === 401 && error.code === 'errorPermissionDenied') hints.push(`the key was refused: run filehaven login again (${clientConfigPath()})`);
    if (error.retryAfter !== undefined) hints.push(`retry after ${error.retryAfter} s`);
    return `${error.code}: ${error.message}${hints.length ? ` (${hints.join('; ')})` : ''}`;
  }
  return (error as Error).message ?? String(error);
}

/** The JSON form of a failure. */
export function errorJson(error: unknown): Record<string, unknown> {
  if (error instanceof FilehavenApiError) {
    return { code: error.code, status: error.status, message: error.message, ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }) };
  }
  const code = error instanceof NotSignedInError ? 'notSignedIn' : error instanceof FilehavenConnectionError ? 'connectionFailed' : 'failed';
  return { code, message: (error as Error).message ?? String(error) };
}

/**
 * Runs a user command: parses `args` against `options` (plus --server and --json),
 * calls `body`, prints its outcome, and turns failures into the documented exit codes.
 */
export async function runUserCommand(name: string, args: string[], options: Options, body: (command: UserCommand) => Promise<Outcome>): Promise<void> {
  const parsed = parseStrict(args, { ...COMMON, ...options });
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const json = values.json === true;
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => controller.abort(new Error(`interrupted (${signal})`));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const command: UserCommand = {
    positionals: parsed.positionals,
    values,
    json,
    signal: controller.signal,
    async client(clientOptions = {}) {
      const server = typeof values.server === 'string' ? values.server : undefined;
      const login = await resolveLogin(server, clientOptions.key ?? true, clientOptions.fallbackServer);
      try {
        return new FilehavenClient({ ...login, signal: controller.signal, resumeFile: uploadStatePath() });
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
    },
    warn(error, what) {
      console.error(terminalText(`filehaven ${name}: ${what ? `${what}: ` : ''}${describe(error)}`));
      return exitCodeOf(error);
    },
  };
  try {
    const outcome = await body(command);
    if (json) console.log(JSON.stringify(outcome.json));
    else if (outcome.human !== undefined && outcome.human !== '') console.log(terminalText(outcome.human));
    if (outcome.exitCode) throw new CommandExit(outcome.exitCode);
  } catch (error) {
    if (error instanceof UsageError || error instanceof CommandExit) throw error;
    if (controller.signal.aborted) {
      console.error(`filehaven ${name}: ${(controller.signal.reason as Error).message}`);
      if (json) console.log(JSON.stringify({ error: { code: 'interrupted', message: 'interrupted' } }));
      throw new CommandExit(EXIT.interrupted);
    }
    command.warn(error);
    if (json) console.log(JSON.stringify({ error: errorJson(error) }));
    if (process.env.FILEHAVEN_DEBUG) console.error(error);
    throw new CommandExit(exitCodeOf(error));
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
