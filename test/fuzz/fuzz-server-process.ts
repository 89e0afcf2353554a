import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, filehavenEntry, runCli } from '../helpers/cli.js';

/** This checkout. */
export const THIS_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** How a server process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last few KiB of its stderr: the crash's message and stack, if any. */
  stderrTail: string;
}

/**
 * The real `filehaven serve` in a child process, as operators run it. A crash (an
 * uncaught exception, an unhandled rejection) ends the process exactly as it would in
 * production, and `exit` says so; restart() brings it back on the same data folder.
 */
export interface ServerProcess {
  /** {base_url}; the port changes on restart (each start picks a free one). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** Null while running; how it ended otherwise. */
  readonly exit: ProcessExit | null;
  /** Starts it again on the same data folder and flags (after a crash). */
  restart(): Promise<void>;
  /** Runs `filehaven <args>` (the operator CLI) on the same data folder. */
  cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** SIGTERM, wait for the exit, remove the data folder (unless `keepData`). */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

const TAIL = 8 * 1024;

/**
 * Starts `node <root>/bin/filehaven.js serve --port 0 --data <fresh folder> --log-level
 * silent <flags>` and resolves once it listens.
 */
export async function spawnServerProcess(flags: string[], env: Record<string, string> = {}, root: string = THIS_ROOT): Promise<ServerProcess> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-fuzz-'));
  let child: ChildProcess | undefined;
  let url = '';
  let exit: ProcessExit | null = null;
  const start = () =>
    new Promise<void>((resolve, reject) => {
      let started = false;
      let stdout = '';
      let stderr = '';
      exit = null;
      const args = [filehavenEntry(root), 'serve', '--port', '0', '--data', dataDir, '--log-level', 'silent', ...flags];
      const proc = spawn(process.execPath, args, { cwd: root, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
      child = proc;
      proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        stdout = (stdout + chunk).slice(-TAIL);
        const match = /listening on (http:\/\/\S+)/.exec(stdout);
        if (!started && match) {
          started = true;
          url = match[1]!;
          resolve();
        }
      });
      proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-TAIL);
      });
      proc.on('exit', (code, signal) => {
        exit = { code, signal, stderrTail: stderr };
        if (!started) reject(new Error(`filehaven serve exited before listening (code ${code}, signal ${signal}):\n${stdout}\n${stderr}`));
      });
    });

  await start();
  return {
    get url() {
      return url;
    },
    get host() {
      return new URL(url).hostname;
    },
    get port() {
      return Number(new URL(url).port);
    },
    dataDir,
    get exit() {
      return exit;
    },
    async restart() {
      if (exit === null) throw new Error('the server process is still running');
      await start();
    },
    cli: (args) => runCli([...args, '--data', dataDir], env, root),
    async stop(options = {}) {
      if (child && exit === null) {
        const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      if (!options.keepData) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
