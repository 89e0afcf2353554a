import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type FreshBackend, freshBackend, settingsEnv, TEST_BACKEND } from './backend.js';
import { ServerProcess } from './server-process.js';

/**
 * A fleet on this machine (issue 10): Debian's nginx, run with the configuration docs/scaling.md
 * recommends (deploy/nginx/filehaven.conf, only its addresses swapped), in front of N
 * `filehaven serve` processes on one backend. On postgres-s3 every server has its own data
 * folder and they share a schema, a bucket and FILEHAVEN_SECRET, as a real fleet does; on
 * sqlite-local they share one data folder (SQLite's WAL lets several processes write).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The recommended configuration, the one the test runs. */
export const NGINX_CONF = path.join(ROOT, 'deploy', 'nginx', 'filehaven.conf');
/** Debian's nginx; FILEHAVEN_NGINX points elsewhere (or at nothing, to try the skip). */
export const NGINX_PATH = process.env.FILEHAVEN_NGINX ?? '/usr/sbin/nginx';

/**
 * The `skip` option of a suite that needs nginx: a message on a developer's machine
 * without it; false (run) when it is there, and always on CI (CI=true), where a missing
 * nginx must fail the run (.ci/run installs it) rather than pass unnoticed.
 */
export function nginxSkip(): string | false {
  if (existsSync(NGINX_PATH) || process.env.CI === 'true') return false;
  return `cluster tests skipped: no nginx at ${NGINX_PATH} (install it with: apt-get install nginx)`;
}

export interface ClusterOptions {
  /** How many filehaven servers. */
  servers: number;
  /** Flags every server gets, after the cluster's own. */
  args?: string[];
  /**
   * Environment per server on top of the backend's (FILEHAVEN_REDIS_URL once shared
   * limits exist: `env: () => ({ FILEHAVEN_REDIS_URL: 'redis://127.0.0.1:6379' })`).
   */
  env?: (index: number) => Record<string, string>;
}

/** After a reload takes a server out, the wait before it is signalled (docs/scaling.md: rolling restart). */
const SETTLE_MS = 1000;

/** A rolling restart's step for one server. */
export interface Restart {
  /** How the drained process exited. */
  exit: { code: number | null; signal: NodeJS.Signals | null };
  /** When it got SIGTERM (Date.now()). */
  signalledAt: number;
  /** Its address as nginx's access log names it. */
  upstream: string;
}

/** One request as nginx's access log shows it. */
export interface ProxiedRequest {
  method: string;
  uri: string;
  /** What nginx answered. */
  status: number;
  /** The servers nginx tried, in order (more than one: it passed the request on). */
  upstreams: string[];
  /** Their answers as $upstream_status lists them (502 for a refused connect). */
  upstreamStatuses: string;
  /** When nginx read the request's first byte and sent its last (ms since the epoch). */
  start: number;
  end: number;
}

/** One of the cluster's servers: the process of its current start and what starts it again. */
interface Member {
  port: number;
  /** Marked `down` in nginx's upstream (out of rotation for a restart). */
  down: boolean;
  dataDir: string;
  env: Record<string, string>;
  args: string[];
  process: ServerProcess;
}

export class Cluster {
  private stopped = false;

  private constructor(
    /** The nginx address clients use: http://127.0.0.1:<port>. */
    readonly url: string,
    /** The settings of the shared backend, for CLI commands (`runCli(args, cluster.cliEnv)` with `--data`). */
    readonly cliEnv: Record<string, string>,
    /** The operator's first password (printed by exactly one server's first start). */
    readonly operatorPassword: string,
    private readonly members: Member[],
    private readonly nginx: { child: ChildProcess; exited: Promise<void>; dir: string; listen: number; failTimeoutMs: number },
    private readonly backend: FreshBackend,
    private readonly folders: string[],
  ) {}

  /** Starts the servers (together, on an empty backend), then nginx in front of them. */
  static async start(options: ClusterOptions): Promise<Cluster> {
    const nginxDir = await mkdtemp(path.join(tmpdir(), 'filehaven-nginx-'));
    const folders = [nginxDir];
    const backend = await freshBackend();
    const members: Member[] = [];
    try {
      const listen = await freePort();
      const url = `http://127.0.0.1:${listen}`;
      const shared = TEST_BACKEND === 'sqlite-local' ? await mkdtemp(path.join(tmpdir(), 'filehaven-cluster-')) : null;
      if (shared) folders.push(shared);
      // Every server of a fleet needs the same secret (keys and direct links); on one data
      // folder the generated <data>/secret is already shared.
      const common = { ...settingsEnv(backend.config), ...(shared ? {} : { FILEHAVEN_SECRET: randomBytes(32).toString('base64url') }) };
      const starts = await Promise.allSettled(
        Array.from({ length: options.servers }, async (_, index): Promise<Member> => {
          const dataDir = shared ?? (await mkdtemp(path.join(tmpdir(), `filehaven-cluster-${index}-`)));
          if (!shared) folders.push(dataDir);
          const port = await freePort();
          const args = [
            '--port',
            String(port),
            // Links in answers name nginx, and each server its own name (docs/configuration.md: --server-name).
            '--public-url',
            url,
            '--server-name',
            `cluster-${index}`,
            '--trust-proxy',
            'true',
            '--log-level',
            'warn',
            ...(options.args ?? []),
          ];
          const env = { ...common, ...(options.env?.(index) ?? {}) };
          return { port, down: false, dataDir, env, args, process: await ServerProcess.start(dataDir, args, 60_000, env) };
        }),
      );
      for (const start of starts) if (start.status === 'fulfilled') members.push(start.value);
      const failed = starts.find((start): start is PromiseRejectedResult => start.status === 'rejected');
      if (failed) throw failed.reason;
      const passwords = members.flatMap((member) => [...member.process.log.matchAll(/password: (\S+)/g)].map((match) => match[1]!));
      if (passwords.length !== 1) throw new Error(`expected one start to show the operator's password, got ${passwords.length}`);
      const nginx = await startNginx(nginxDir, listen, members);
      return new Cluster(url, { ...common, FILEHAVEN_DATA: members[0]!.dataDir }, passwords[0]!, members, nginx, backend, folders);
    } catch (error) {
      await Promise.all(members.map((member) => member.process.kill()));
      await backend.remove();
      await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
      throw error;
    }
  }

  /** How many servers. */
  get size(): number {
    return this.members.length;
  }

  /** The direct address of server `index` (for probes that must not go through nginx). */
  serverUrl(index: number): string {
    return `http://127.0.0.1:${this.member(index).port}`;
  }

  /** The output of server `index`'s current start. */
  serverLog(index: number): string {
    return this.member(index).process.log;
  }

  /**
   * A rolling restart's step, as "Running several servers" in docs/scaling.md does it. With
   * `outOfNginx` (the default): server `index` is marked `down` and nginx reloaded, so no new
   * connection goes to it; then SIGTERM (what it was already sent finishes: it drains); once
   * it has exited, a new start on the same port with the same flags, data folder and
   * environment; then `down` goes and nginx reloads again. Without `outOfNginx`, just the
   * signal and the start (what `systemctl restart` alone does): a connection the kernel had
   * queued for the server but the process had not accepted yet is reset when the server
   * stops listening, which nginx cannot pass on once it has sent the request.
   * Resolves when nginx sends the server requests again (a request through nginx was
   * answered by it).
   */
  async restart(index: number, { outOfNginx = true }: { outOfNginx?: boolean } = {}): Promise<Restart> {
    const member = this.member(index);
    if (outOfNginx) {
      member.down = true;
      await this.reloadNginx();
      // What the old workers sent the server before the reload has been accepted by now (it
      // was connected within milliseconds of arriving); what is still running drains.
      await sleep(SETTLE_MS);
    }
    const signalledAt = Date.now();
    const exit = await member.process.stop(60_000);
    member.process = await ServerProcess.start(member.dataDir, member.args, 60_000, member.env);
    const ready = () =>
      fetch(`${this.serverUrl(index)}/readyz`).then(
        (answer) => answer.status === 200,
        () => false,
      );
    await waitFor(ready, 30_000, `server ${index} ready again`);
    if (outOfNginx) {
      member.down = false;
      await this.reloadNginx();
    }
    // Without the reload, nginx took the server out for fail_timeout when it refused a
    // connect: with the next server stopped before this one is back in, every server would
    // be out at once.
    const upstream = `127.0.0.1:${member.port}`;
    const deadline = Date.now() + this.nginx.failTimeoutMs + 30_000;
    let mark = (await this.accessLog()).length;
    for (;;) {
      await fetch(`${this.url}/healthz`).then((answer) => answer.arrayBuffer());
      const log = await this.accessLog();
      // The access log's line names the server that answered (log_format in startNginx).
      if (log.slice(mark).some((line) => line.includes(` up=${upstream} ups=200 `))) break;
      mark = log.length;
      if (Date.now() > deadline) throw new Error(`nginx sent no request to restarted server ${index} (${upstream})`);
      await sleep(100);
    }
    return { exit, signalledAt, upstream };
  }

  /**
   * Writes the configuration with the servers' current `down` marks and reloads nginx
   * (SIGHUP, what `nginx -s reload` sends). Resolves once the workers of the old
   * configuration have stopped accepting: from then on only the new one picks servers.
   */
  private async reloadNginx(): Promise<void> {
    const { dir } = this.nginx;
    await writeSiteConf(dir, this.nginx.listen, this.members);
    const check = spawnSync(NGINX_PATH, [...nginxFlags(dir), '-t'], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`nginx -t refused the configuration:\n${check.stderr}`);
    const mark = (await this.errorLog()).length;
    this.nginx.child.kill('SIGHUP');
    // An old worker logs this when the master tells it to stop accepting and finish.
    const shutDown = async () => (await this.errorLog()).slice(mark).includes('gracefully shutting down');
    await waitFor(shutDown, 10_000, 'nginx to reload');
  }

  /** nginx's access log, a line per request (log_format in startNginx). */
  async accessLog(): Promise<string[]> {
    const text = await readFile(path.join(this.nginx.dir, 'access.log'), 'utf8').catch(() => '');
    return text.split('\n').filter((line) => line !== '');
  }

  /** The access log's requests: what nginx answered, which servers it tried, and when. */
  async requests(): Promise<ProxiedRequest[]> {
    return (await this.accessLog()).map((line) => {
      const match = /^(\S+) (\S+) (\d+) up=(.*) ups=(.*) t=([\d.]+) rt=([\d.]+)$/.exec(line);
      if (!match) throw new Error(`unexpected access log line: ${line}`);
      const end = Number(match[6]) * 1000;
      return {
        method: match[1]!,
        uri: match[2]!,
        status: Number(match[3]),
        upstreams: match[4]!.split(/, | : /),
        upstreamStatuses: match[5]!,
        start: end - Number(match[7]) * 1000,
        end,
      };
    });
  }

  /** nginx's error log (connect refusals, resets, "no live upstreams"...). */
  async errorLog(): Promise<string> {
    return readFile(path.join(this.nginx.dir, 'error.log'), 'utf8').catch(() => '');
  }

  /** Stops nginx and every server, removes the backend and the folders; idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.nginx.child.kill('SIGTERM');
    await this.nginx.exited;
    await Promise.all(this.members.map((member) => member.process.stop()));
    await this.backend.remove();
    await Promise.all(this.folders.map((folder) => rm(folder, { recursive: true, force: true })));
  }

  private member(index: number): Member {
    const member = this.members[index];
    if (!member) throw new Error(`no server ${index} in a cluster of ${this.members.length}`);
    return member;
  }
}

/**
 * The recommended configuration with this machine's addresses: nginx listens on
 * 127.0.0.1:<listen>, and the upstream's example `server` lines become one per port, each
 * with the parameters the recommended lines carry. Throws if the file no longer has the
 * lines it swaps, so the test never silently runs something else.
 */
export function localNginxConf(recommended: string, listen: number, servers: Array<{ port: number; down: boolean }>): string {
  const examples = [...recommended.matchAll(/^(\s*)server\s+\d+\.\d+\.\d+\.\d+:\d+(\s[^;]*)?;\s*$/gm)];
  const listens = [...recommended.matchAll(/^(\s*)listen\s+80;\s*$/gm)];
  const names = [...recommended.matchAll(/^(\s*)server_name\s+[^;]+;\s*$/gm)];
  if (examples.length === 0 || listens.length !== 1 || names.length !== 1) {
    throw new Error(`${NGINX_CONF}: expected upstream "server <ip>:<port> ...;" lines, one "listen 80;" and one "server_name"`);
  }
  const [first] = examples;
  const indent = first![1]!;
  const params = first![2] ?? '';
  const upstream = servers.map((server) => `${indent}server 127.0.0.1:${server.port}${params}${server.down ? ' down' : ''};`).join('\n');
  let text = recommended;
  // Every example server line goes; the first one's place takes the local list.
  text = text.replace(first![0], `${upstream}\n`);
  for (const line of examples.slice(1)) text = text.replace(line[0], '');
  text = text.replace(listens[0]![0], `${listens[0]![1]}listen 127.0.0.1:${listen};\n`);
  text = text.replace(names[0]![0], `${names[0]![1]}server_name 127.0.0.1;\n`);
  return text;
}

/** fail_timeout of the recommended upstream lines, in milliseconds (10 s, nginx's default, when unset). */
function failTimeoutMs(conf: string): number {
  const match = /fail_timeout=(\d+)(ms|s)?\b/.exec(conf);
  if (!match) return 10_000;
  return Number(match[1]) * (match[2] === 'ms' ? 1 : 1000);
}

/** nginx's flags for a prefix folder of its own (pid, logs, temp files, configuration). */
function nginxFlags(dir: string): string[] {
  return ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')];
}

/** The recommended site file with this machine's addresses, where nginx.conf includes it. */
async function writeSiteConf(dir: string, listen: number, servers: Array<{ port: number; down: boolean }>): Promise<void> {
  const recommended = await readFile(NGINX_CONF, 'utf8');
  await writeFile(path.join(dir, 'filehaven.conf'), localNginxConf(recommended, listen, servers));
}

/** nginx in the foreground as a child process, everything it writes in `dir`. */
async function startNginx(dir: string, listen: number, servers: Array<{ port: number; down: boolean }>) {
  if (!existsSync(NGINX_PATH)) {
    throw new Error(`no nginx at ${NGINX_PATH}, and CI=true does not skip the cluster tests: .ci/run installs it (apt-get install -y nginx)`);
  }
  await writeSiteConf(dir, listen, servers);
  await writeNginxFrame(dir, { accessLog: true });
  const { child, exited } = await runNginx(dir, listen);
  return { child, exited, dir, listen, failTimeoutMs: failTimeoutMs(await readFile(NGINX_CONF, 'utf8')) };
}

/**
 * The frame a distribution's nginx.conf gives the site file `dir`/filehaven.conf (Debian's
 * includes conf.d/*.conf in its http block); everything a process of its own needs lives in
 * `dir`. The error log keeps notices: a reload is seen there. The access log (one line per
 * request: what the cluster test reads) is left out where a disk write per request would
 * weigh on a measurement.
 */
export async function writeNginxFrame(dir: string, options: { accessLog: boolean }): Promise<void> {
  for (const temp of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(path.join(dir, temp));
  await writeFile(
    path.join(dir, 'nginx.conf'),
    [
      'worker_processes 1;',
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log info;`,
      'events { worker_connections 512; }',
      'http {',
      ...(options.accessLog
        ? [
            `  log_format cluster '$request_method $request_uri $status up=$upstream_addr ups=$upstream_status t=$msec rt=$request_time';`,
            `  access_log ${dir}/access.log cluster;`,
          ]
        : ['  access_log off;']),
      `  client_body_temp_path ${dir}/body;`,
      `  proxy_temp_path ${dir}/proxy;`,
      `  fastcgi_temp_path ${dir}/fastcgi;`,
      `  uwsgi_temp_path ${dir}/uwsgi;`,
      `  scgi_temp_path ${dir}/scgi;`,
      `  include ${dir}/filehaven.conf;`,
      '}',
      '',
    ].join('\n'),
  );
}

/** Checks (nginx -t) and starts nginx on the frame in `dir`; resolves once it listens on `listen`. */
export async function runNginx(dir: string, listen: number): Promise<{ child: ChildProcess; exited: Promise<void> }> {
  const check = spawnSync(NGINX_PATH, [...nginxFlags(dir), '-t'], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`nginx -t refused the generated configuration:\n${check.stderr}`);
  const child = spawn(NGINX_PATH, [...nginxFlags(dir), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  await waitFor(
    async () => {
      if (gone) throw new Error(`nginx exited at start: ${stderr}`);
      return connects(listen);
    },
    10_000,
    'nginx listening',
  );
  return { child, exited };
}

/** A port free right now on 127.0.0.1 (the kernel's pick, released for the caller). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts connections on 127.0.0.1:`port` now. */
function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
