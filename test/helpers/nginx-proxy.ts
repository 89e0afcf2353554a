import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import type { Config } from '../../src/config/config.js';
import { launchChromium } from './chromium.js';
import { freePort, localNginxConf, NGINX_CONF, runNginx, writeNginxFrame } from './cluster.js';
import { startTestServer, type TestServer } from './server.js';

/**
 * Debian's nginx with the recommended site file (deploy/nginx/filehaven.conf) in front of
 * one server, with another `client_max_body_size`: a proxy whose limit is below the
 * site's, as an operator may well run it. Reserve the address first (the server's
 * --public-url must name it: the uploader's tus URLs are absolute), then start nginx once
 * the server listens.
 */
export class NginxProxy {
  private constructor(
    /** Where clients go: http://127.0.0.1:<port>. */
    readonly url: string,
    private readonly listen: number,
    private readonly dir: string,
    private nginx: { child: ChildProcess; exited: Promise<void> } | null = null,
  ) {}

  /** A free address for nginx, and its folder; nothing runs yet. */
  static async reserve(): Promise<NginxProxy> {
    const listen = await freePort();
    return new NginxProxy(`http://127.0.0.1:${listen}`, listen, await mkdtemp(path.join(tmpdir(), 'filehaven-proxy-')));
  }

  /** Starts nginx in front of the server on `serverPort`, taking request bodies up to `clientMaxBodySize` (nginx's units: 100m, 1m). */
  async start(serverPort: number, clientMaxBodySize: string): Promise<void> {
    const recommended = await readFile(NGINX_CONF, 'utf8');
    const limit = /^(\s*)client_max_body_size\s+\S+;$/m;
    if (!limit.test(recommended)) throw new Error(`${NGINX_CONF}: expected one "client_max_body_size ...;" line`);
    const conf = localNginxConf(recommended, this.listen, [{ port: serverPort, down: false }]).replace(limit, `$1client_max_body_size ${clientMaxBodySize};`);
    await writeFile(path.join(this.dir, 'filehaven.conf'), conf);
    await writeNginxFrame(this.dir, { accessLog: false });
    this.nginx = await runNginx(this.dir, this.listen);
  }

  /** Stops nginx and removes its folder. */
  async stop(): Promise<void> {
    if (this.nginx) {
      this.nginx.child.kill('SIGTERM');
      await this.nginx.exited;
      this.nginx = null;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** A test server behind an NginxProxy, Chromium, and a work folder: a browser test's setting. */
export interface BrowserBehindProxy {
  proxy: NginxProxy;
  t: TestServer;
  browser: Browser;
  /** An empty folder for the files the browser picks. */
  work: string;
  /** Stops and removes all of it. */
  close(): Promise<void>;
}

/**
 * Starts a test server whose links and tus URLs name nginx (as --public-url does behind a
 * proxy), nginx in front of it taking bodies up to `clientMaxBodySize`, and Chromium.
 */
export async function browserBehindProxy(clientMaxBodySize: string, overrides: Partial<Config> = {}): Promise<BrowserBehindProxy> {
  const proxy = await NginxProxy.reserve();
  const t = await startTestServer({ publicUrl: proxy.url, trustProxy: true, ...overrides });
  await proxy.start((t.server.app.server.address() as AddressInfo).port, clientMaxBodySize);
  const browser = await launchChromium();
  const work = await mkdtemp(path.join(tmpdir(), 'filehaven-proxy-e2e-'));
  return {
    proxy,
    t,
    browser,
    work,
    async close() {
      await browser.close();
      await proxy.stop();
      await t.close();
      await rm(work, { recursive: true, force: true });
    },
  };
}
