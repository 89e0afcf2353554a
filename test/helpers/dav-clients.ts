import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { FilehavenClient } from '../../src/client/index.js';

/*
 * The third-party WebDAV clients the tests of issue 27 run (Debian's litmus and rclone),
 * found on PATH, and run as child processes with their output collected.
 */

/** Where `name` is on PATH, or null. */
export function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  return null;
}

/**
 * The `skip` option of a suite that needs the Debian package `tool`: a message on a
 * developer's machine without it; false (run) when it is there, and always on CI
 * (CI=true), where a missing tool must fail the run (.ci/run installs it) rather than
 * pass unnoticed.
 */
export function toolSkip(tool: string, packageName = tool): string | false {
  if (onPath(tool) || process.env.CI === 'true') return false;
  return `skipped: no ${tool} on PATH (install it with: apt-get install ${packageName})`;
}

/** How a child process ended, and all it printed (stdout and stderr interleaved as they came). */
export interface ToolRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs `command` to its end; never rejects on a non-zero exit (callers assert on it). */
export function runTool(command: string, args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    for (const stream of [child.stdout, child.stderr]) stream.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, output }));
  });
}

/**
 * Every active file of an account as the API shows it, by its path in the folder tree
 * ("a/b/name", names as stored), with its SHA-256 over the bytes a download gives: what
 * a WebDAV client stored, seen through the other door. The account needs premium and
 * traffic (downloads go through direct links).
 */
export async function filesThroughApi(server: string, key: string): Promise<Map<string, string>> {
  const client = new FilehavenClient({ server, key });
  const folders = new Map<string, { name: string; parentId: string | null }>();
  let cursor: string | undefined;
  do {
    const page = await client.listFolders({ limit: 500, cursor });
    for (const folder of page.items) folders.set(folder.id, { name: folder.name, parentId: folder.parentId });
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  const pathOf = (folderId: string | null): string[] => {
    const names: string[] = [];
    for (let id = folderId; id !== null; ) {
      const folder = folders.get(id);
      if (!folder) throw new Error(`folder ${id} is not in GET /folders`);
      names.unshift(folder.name);
      id = folder.parentId;
    }
    return names;
  };
  const listed: Array<{ id: string; where: string }> = [];
  for await (const file of client.allFiles({ status: ['A'] })) listed.push({ id: file.id, where: [...pathOf(file.folderId), file.name].join('/') });
  const files = new Map<string, string>();
  // A few downloads at a time: hundreds of small files one by one are mostly waiting.
  let next = 0;
  const worker = async () => {
    while (next < listed.length) {
      const { id, where } = listed[next++]!;
      if (files.has(where)) throw new Error(`two active files at ${where} through the API`);
      files.set(where, '');
      const download = await client.download(id);
      const hash = createHash('sha256');
      for await (const chunk of download.body) hash.update(chunk as Buffer);
      files.set(where, hash.digest('hex'));
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
  return files;
}
