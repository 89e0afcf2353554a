import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../test/helpers/cluster.js';
import { defer } from './cleanup.js';
import { call } from './http-client.js';

/**
 * nginx as the reference for moving bytes: WebDAV `PUT` into a folder (what an upload must
 * do at least, minus the hash; the bench adds the fsync nginx does not do) and static
 * files with sendfile (what a download can do at best). One worker, like filehaven's one
 * process. The bench installs nothing: without nginx it says what to install.
 */
export interface NginxReference {
  url: string;
  /** The folder nginx serves and PUTs into. */
  root: string;
}

export function nginxMissing(): string | null {
  const found = spawnSync('nginx', ['-v'], { encoding: 'utf8' });
  if (found.error || found.status !== 0) {
    return 'nginx is not installed: the ratios against it are left out. Install it (Debian: apt-get install nginx-light; any nginx with the http_dav_module) and run again';
  }
  const modules = spawnSync('nginx', ['-V'], { encoding: 'utf8' }).stderr ?? '';
  if (!modules.includes('http_dav_module')) return 'this nginx lacks the http_dav_module (WebDAV PUT): install nginx-light or nginx-full';
  return null;
}

/** Starts nginx on a generated configuration in `dir`; stopped when the section unwinds. */
export async function startNginx(dir: string): Promise<NginxReference> {
  const root = path.join(dir, 'www');
  for (const sub of ['www', 'temp', 'logs']) await mkdir(path.join(dir, sub), { recursive: true });
  const port = await freePort();
  const temp = path.join(dir, 'temp');
  const conf = `
${process.getuid?.() === 0 ? 'user root root;' : ''}
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  client_body_temp_path ${temp}/body;
  proxy_temp_path ${temp}/proxy;
  fastcgi_temp_path ${temp}/fastcgi;
  uwsgi_temp_path ${temp}/uwsgi;
  scgi_temp_path ${temp}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    client_max_body_size 0;
    location / {
      dav_methods PUT DELETE;
      dav_access user:rw;
    }
  }
}
`;
  const confFile = path.join(dir, 'nginx.conf');
  await writeFile(confFile, conf);
  const child = spawn('nginx', ['-p', dir, '-c', confFile, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (data: Buffer) => (stderr += data.toString()));
  const exited = once(child, 'exit');
  defer('stop nginx', async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
    await exited;
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${stderr.trim()}`);
    try {
      await call(`${url}/`);
      return { url, root };
    } catch {
      if (attempt > 100) throw new Error(`nginx did not answer on ${url}: ${stderr.trim()}`);
      await sleep(50);
    }
  }
}
