import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { defer } from './cleanup.js';
import { call } from './http-client.js';

/** What makes a backend: the server's flags beyond the data folder, and its extra environment. */
export interface BackendSettings {
  flags: string[];
  env: Record<string, string>;
}

/**
 * Limits out of the way of a benchmark, but on: every request still runs through the rate
 * limiter, the upload-volume reservation and the traffic accounting, as in production.
 */
const BENCH_FLAGS = [
  '--log-level',
  'warn',
  '--max-file-size',
  String(64 * 1024 ** 3),
  '--api-rate-per-key',
  '1000000000',
  '--api-rate-per-ip',
  '1000000000',
  '--free-downloads-per-ip',
  '1000',
  '--upload-volume-premium',
  String(1024 ** 5),
  '--gc-interval',
  '0',
];

export const PASSWORD = 'bench-password';

/**
 * The compiled CLI the bench runs: dist/ (built by the run first), or BENCH_ENTRY, a tree
 * compiled already (the test runner's, so the smoke test does not build a second one).
 */
export const SERVER_ENTRY = process.env.BENCH_ENTRY ?? 'dist/cli/index.js';

/** The environment without FILEHAVEN_* settings, so the caller's shell cannot change what a backend is. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('FILEHAVEN_')));
  return { ...env, ...extra };
}

/** Runs the compiled CLI on this data folder and backend; its stdout. */
export function filehavenCli(dataDir: string, settings: BackendSettings, ...args: string[]): string {
  const result = spawnSync(process.execPath, [SERVER_ENTRY, ...args, '--data', dataDir, ...settings.flags], {
    encoding: 'utf8',
    env: cleanEnv(settings.env),
  });
  if (result.status !== 0) throw new Error(`filehaven ${args.join(' ')}: ${result.stderr || result.stdout}`);
  return result.stdout;
}

/** A premium account with traffic to spare. */
export function createAccount(dataDir: string, settings: BackendSettings, login: string): void {
  filehavenCli(
    dataDir,
    settings,
    'accounts',
    'create',
    '--login',
    login,
    '--password',
    PASSWORD,
    '--premium-days',
    '365',
    '--traffic',
    String(1024 ** 5),
    '--json',
  );
}

export interface RunningServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** `filehaven serve`, compiled, as `npm start` runs it; stopped (SIGTERM) when the section unwinds. */
export async function startFilehaven(dataDir: string, settings: BackendSettings, fileLimit?: number): Promise<RunningServer> {
  const server = await launchFilehaven(dataDir, settings, fileLimit);
  defer('stop the filehaven server', server.stop);
  return server;
}

/**
 * A server the caller stops or kills (SIGKILL: no handler runs) itself. `fileLimit`: the
 * open files it needs (withFileLimit).
 */
export async function launchFilehaven(dataDir: string, settings: BackendSettings, fileLimit?: number): Promise<RunningServer & { kill(): Promise<void> }> {
  const [command, args] = withFileLimit(
    process.execPath,
    [SERVER_ENTRY, 'serve', '--port', '0', '--data', dataDir, ...BENCH_FLAGS, ...settings.flags],
    fileLimit,
  );
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: cleanEnv(settings.env),
  });
  const exited = once(child, 'exit');
  const signal = (name: NodeJS.Signals) => async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  const url = await listeningUrl(child, 'filehaven serve');
  return { url, pid: child.pid!, stop: signal('SIGTERM'), kill: signal('SIGKILL') };
}

/** The URL a child prints as `listening on http://...`; rejects if it exits first. */
export async function listeningUrl(child: ChildProcess, what: string): Promise<string> {
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (data: Buffer) => {
      out += data.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${out}`)));
  });
  child.stdout!.resume();
  return url;
}

export async function apiKey(url: string, login: string): Promise<string> {
  const answer = await call(`${url}/apikeys`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ login, password: PASSWORD }).toString(),
  });
  const key = /<content type="text">([^<]+)</.exec(answer.body)?.[1];
  if (!key) throw new Error(`no API key: ${answer.status} ${answer.body}`);
  return key;
}

/** This process's limit of open files: soft (what applies) and hard (how far a child may raise it). */
export function openFilesLimit(): { soft: number; hard: number } {
  const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  const value = (raw: string | undefined) => (raw === undefined || raw === 'unlimited' ? Infinity : Number(raw));
  return { soft: value(line?.[1]), hard: value(line?.[2]) };
}

/**
 * The command that runs `command args` with at least `needed` open files: as it is when
 * the soft limit allows them; else through `sh -c 'ulimit -n'`, which raises the child's
 * soft limit up to the hard one (no privilege needed). Throws when even the hard limit is
 * too low (raise it: `ulimit -Hn`, or LimitNOFILE= in a unit).
 */
export function withFileLimit(command: string, args: string[], needed?: number): [string, string[]] {
  if (needed === undefined) return [command, args];
  const { soft, hard } = openFilesLimit();
  if (soft >= needed) return [command, args];
  if (hard < needed) throw new Error(`${needed} open files needed, the hard limit is ${hard}: raise it (ulimit -Hn) and run again`);
  return ['/bin/sh', ['-c', 'ulimit -n "$0" && exec "$@"', String(needed), command, ...args]];
}
