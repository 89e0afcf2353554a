import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cleanEnv, filehavenEntry } from './cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = filehavenEntry();
/** How much of a server's output is kept, for failure messages. */
const OUTPUT_TAIL = 16 * 1024;

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/**
 * `filehaven serve` as a real child process, for tests that kill it (SIGKILL) and start it
 * again on the same data folder. The port is 0 (a free one); the base URL is read from the
 * "listening on http://..." line the command prints.
 */
export class ServerProcess {
  private constructor(
    private readonly child: ChildProcess,
    /** {base_url} of this start. */
    readonly url: string,
    private readonly exited: Promise<Exit>,
    private readonly output: { text: string },
  ) {}

  /**
   * Starts `filehaven serve --port 0 --data <dataDir> <args>` and waits for its listening
   * line; `env` adds FILEHAVEN_* settings (a test backend's: test/helpers/backend.ts settingsEnv).
   */
  static async start(dataDir: string, args: string[] = [], timeoutMs = 30_000, env: Record<string, string> = {}): Promise<ServerProcess> {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir, ...args], {
      cwd: ROOT,
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    // Kept (the tail) for as long as the process lives, so a failure can show it.
    const output = { text: '' };
    const listening = new Promise<string>((resolve) => {
      const keep = (chunk: string) => {
        output.text = (output.text + chunk).slice(-OUTPUT_TAIL);
        const match = /listening on (http:\/\/\S+)/.exec(output.text);
        if (match) resolve(match[1]!);
      };
      child.stdout!.setEncoding('utf8').on('data', keep);
      child.stderr!.setEncoding('utf8').on('data', keep);
    });
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      listening.then((url) => ({ url })),
      exited.then((exit) => ({ error: `exited before listening (code ${exit.code}, signal ${exit.signal})` })),
      new Promise<{ error: string }>((resolve) => {
        timer = setTimeout(() => resolve({ error: `no "listening on" line within ${timeoutMs} ms` }), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if ('error' in outcome) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`filehaven serve --data ${dataDir}: ${outcome.error}\n--- output ---\n${output.text}`);
    }
    return new ServerProcess(child, outcome.url, exited, output);
  }

  /** The last lines the process printed (stdout and stderr together). */
  get log(): string {
    return this.output.text;
  }

  /** SIGKILL: no handler runs, nothing is flushed; resolves once the process is gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM (the server finishes its requests and closes the database); SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<Exit> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.exited;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
