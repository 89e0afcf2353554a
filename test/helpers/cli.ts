import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The script that runs `filehaven` of a checkout: for this checkout the build that
 * scripts/run-tests.js makes once per run (FILEHAVEN_TEST_CLI, the compiled sources bundled,
 * else FILEHAVEN_TEST_ENTRY, the compiled sources), so the hundreds of processes the CLI,
 * crash and fuzz tests start neither compile TypeScript nor load 500 modules each; else the
 * sources through tsx (scripts/filehaven-sources.js), never a dist/ that may be stale;
 * bin/filehaven.js for a checkout without that script.
 */
export function filehavenEntry(root: string = ROOT): string {
  const built = process.env.FILEHAVEN_TEST_CLI || process.env.FILEHAVEN_TEST_ENTRY;
  if (built && path.resolve(root) === path.resolve(ROOT)) return built;
  const sources = path.join(root, 'scripts', 'filehaven-sources.js');
  return existsSync(sources) ? sources : path.join(root, 'bin', 'filehaven.js');
}

/** The parent's environment without FILEHAVEN_* settings, so only what a test sets counts. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FILEHAVEN_')));
  return { ...env, ...extra };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `filehaven <args>` to completion; `root` picks another checkout (the fuzz script's --root). */
export function runCli(args: string[], env: Record<string, string> = {}, root: string = ROOT): Promise<CliResult> {
  return outcomeOf(spawn(process.execPath, [filehavenEntry(root), ...args], { cwd: root, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** Runs `filehaven <args>` with `input` on its standard input (`--password-stdin`). */
export function runCliWithInput(args: string[], input: string, env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [filehavenEntry(), ...args], { cwd: ROOT, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin!.end(input);
  return outcomeOf(child);
}

/**
 * Sets a site up in `dataDir` as a first `filehaven serve` would (the database and the
 * secret), without a server: the operator commands refuse a folder that is not a site's.
 */
export async function createSite(dataDir: string): Promise<void> {
  const { loadConfig } = await import('../../src/config/config.js');
  const { openServices } = await import('../../src/composition.js');
  const services = await openServices(loadConfig({ data: dataDir }, {}), { log: () => {} });
  await services.close();
}

/** A child's exit code and everything it printed, once it has closed. */
export function outcomeOf(child: ChildProcess): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Asserts a successful run with nothing on stderr; returns stdout. */
export function assertOk(result: CliResult): string {
  assert.equal(result.code, 0, `exit code; stderr: ${result.stderr}`);
  assert.equal(result.stderr, '', 'nothing on stderr');
  return result.stdout;
}

/**
 * Asserts a failed run: the exit code, a first stderr line matching `message`, no stack
 * trace. Failures (1) print exactly one line; usage errors (2) add one line pointing at
 * the help (`Run 'filehaven help accounts' for usage.`), and nothing else.
 */
export function assertFails(result: CliResult, code: 1 | 2, message: RegExp): void {
  assert.equal(result.code, code, `exit code; stdout: ${result.stdout} stderr: ${result.stderr}`);
  const lines = result.stderr.trimEnd().split('\n');
  assert.match(lines[0]!, message);
  if (code === 1) assert.equal(lines.length, 1, `more than one line on stderr:\n${result.stderr}`);
  else {
    assert.equal(lines.length, 2, `a usage error and its hint only:\n${result.stderr}`);
    assert.match(lines[1]!, /^Run 'filehaven help( [a-z-]+){0,2}' for usage\.$/);
  }
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'stack trace on stderr');
  assert.equal(result.stdout, '', 'nothing on stdout');
}
