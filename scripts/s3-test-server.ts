// A real S3 server for a test run: a one-node Ceph cluster with radosgw, started by
// scripts/ceph-rgw.sh in a fresh temporary folder (see ../shared/S3-TESTING.md for why radosgw
// and not an npm fake). Start one per run, not per test: init takes 10-15 s.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./ceph-rgw.sh', import.meta.url));
/** Longer than init ever took (15 s) by far; a hung init must not hang the run. */
const INIT_TIMEOUT_MS = 180_000;

/** A running test server; the tests see it as FILEHAVEN_TEST_S3_ENDPOINT / _ACCESS_KEY / _SECRET_KEY. */
export interface TestS3Server {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Stops the daemons and removes their folder; a second call does nothing. */
  stop(): Promise<void>;
}

/** Inits a fresh cluster in a fresh temporary folder and waits until radosgw answers. */
export async function startTestS3(): Promise<TestS3Server> {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-rgw-'));
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopAndRemove(dir));
  try {
    await run('bash', [SCRIPT, 'init', dir], { timeout: INIT_TIMEOUT_MS, killSignal: 'SIGKILL' });
    const env = parseEnv(await readFile(path.join(dir, 'env'), 'utf8'));
    const { S3_ENDPOINT: endpoint, S3_AK: accessKeyId, S3_SK: secretAccessKey } = env;
    if (!endpoint || !accessKeyId || !secretAccessKey) throw new Error(`${path.join(dir, 'env')} lacks S3_ENDPOINT, S3_AK or S3_SK`);
    return { endpoint, accessKeyId, secretAccessKey, stop };
  } catch (error) {
    // Whatever init started before failing (a monitor, an OSD) stops with the folder.
    const stderr = (error as { stderr?: string }).stderr?.trim();
    await stop().catch(() => {});
    throw new Error(`could not start radosgw for the S3 tests (bash ${SCRIPT} init): ${stderr || (error as Error).message}`, { cause: error });
  }
}

async function stopAndRemove(dir: string): Promise<void> {
  try {
    await run('bash', [SCRIPT, 'stop', dir]);
  } finally {
    // Removed even if stop failed: the daemons cannot outlive their data for long, and a
    // 20 GiB sparse file per run must not pile up in /tmp.
    await rm(dir, { recursive: true, force: true });
  }
}

/** KEY=value lines, as ceph-rgw.sh writes them (no quoting). */
function parseEnv(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (match) values[match[1]!] = match[2]!;
  }
  return values;
}
