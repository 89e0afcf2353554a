import { randomBytes, scrypt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Config, DEFAULTS } from '../../src/config/config.js';
import type { Clock } from '../../src/domain/ids.js';
import type { Account } from '../../src/domain/types.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { type FreshBackend, freshBackend, settingsEnv } from './backend.js';
import { openStorageView, type StorageView } from './storage-view.js';

/** A clock tests can move; starts at the given time. */
export class TestClock {
  constructor(public now: number = Date.parse('2026-11-21T10:04:05Z')) {}
  readonly fn: Clock = () => this.now;
  set(iso: string): void {
    this.now = Date.parse(iso);
  }
  advance(ms: number): void {
    this.now += ms;
  }
}

export interface TestAccount {
  account: Account;
  login: string;
  password: string;
  key: string;
}

export interface TestServer {
  server: RunningServer;
  /** The configuration it runs on. */
  config: Config;
  /** {base_url} */
  url: string;
  /** The data folder: the secret, and on sqlite-local the database and the blobs. */
  dataDir: string;
  /** The storage, seen the same way on every backend (storage-view.ts): assert through it, not the data folder. */
  storage: StorageView;
  /** FILEHAVEN_* variables that point a CLI process at this server's storage besides `--data` (none on sqlite-local). */
  backendEnv: Record<string, string>;
  clock: TestClock | undefined;
  /** Creates an account through the service and gets its key through POST /apikeys. */
  account(options?: { login?: string; premiumDays?: number; trafficBytes?: number; name?: string; email?: string }): Promise<TestAccount>;
  /** fetch() relative to the base URL. */
  fetch(pathname: string, init?: RequestInit): Promise<Response>;
  /** Uploads through the API; returns the response and the parsed ids. */
  upload(
    key: string,
    name: string,
    content: Buffer | string,
  ): Promise<{ response: Response; body: string; id: string; deleteLink: string; downloadLink: string }>;
  /**
   * Another server on the same storage and secret (several servers of one site, issue 10),
   * with `overrides` on top of this one's configuration. Closing it stops only it; the
   * storage goes with this server's close().
   */
  sibling(overrides?: Partial<Config>): Promise<TestServer>;
  /** Stops the server (unless a test did: server.close() may be called first) and removes all it stored. */
  close(): Promise<void>;
}

let counter = 0;

/**
 * The password of every test account, and its hash, made once per process. The hash is
 * scrypt's, in the stored format (security/passwords.ts), at a work factor of 2^10 where a
 * new password gets 2^15: the format names its parameters so they can change, and
 * verifyPassword checks each hash at its own, so sign-ins run the production code on it.
 * At 2^15 each check cost about 0.1 s of CPU, and the checks of test accounts (POST /apikeys
 * in account(), the sign-ins of the page tests) were most of the CPU of many HTTP files
 * (sign-in-return: 99 checks, 11 of its 12 s). The production work factor is asserted in
 * test/unit/passwords.test.ts and runs for every password the API, the pages and the CLI set.
 */
const TEST_PASSWORD = 'correct horse battery';
const TEST_HASH_PARAMS = { N: 1 << 10, r: 8, p: 1 } as const;
let testPasswordHash: Promise<string> | undefined;

/**
 * `password`'s hash at TEST_HASH_PARAMS, as hashPassword writes one (a 16-byte salt, a
 * 32-byte key, NFC): for a test that checks a password many times (link-guessing.test.ts)
 * and is about what happens around the check, not its cost.
 */
export function cheapPasswordHash(password: string): Promise<string> {
  const { N, r, p } = TEST_HASH_PARAMS;
  const salt = randomBytes(16);
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, 32, { N, r, p }, (error, key) =>
      error ? reject(error) : resolve(['scrypt', N, r, p, salt.toString('base64'), key.toString('base64')].join('$')),
    ),
  );
}

const DAY_MS = 86_400_000;

/**
 * Starts a real server on a free port with a fresh data folder and fresh storage of the
 * run's backend (backend.ts: SQLite in the data folder, or a PostgreSQL schema and a bucket).
 */
export async function startTestServer(overrides: Partial<Config> = {}, clock?: TestClock): Promise<TestServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-test-'));
  const removeAll = async (backend?: { remove(): Promise<void> }) => {
    await backend?.remove();
    await rm(dataDir, { recursive: true, force: true });
  };
  let backend: FreshBackend | undefined;
  try {
    backend = await freshBackend();
  } catch (error) {
    await removeAll();
    throw error;
  }
  const config: Config = { ...DEFAULTS, port: 0, dataDir, logLevel: 'silent', ...backend.config, ...overrides };
  return runTestServer(config, backend, clock, () => removeAll(backend));
}

/** Starts a server on `config`; `removeAll` is what its close() removes after stopping it. */
async function runTestServer(config: Config, backend: FreshBackend, clock: TestClock | undefined, removeAll: () => Promise<void>): Promise<TestServer> {
  const { dataDir } = config;
  let server: RunningServer;
  let storage: StorageView;
  try {
    server = await startServer(config, { clock: clock?.fn, log: () => {}, warn: () => {} });
  } catch (error) {
    await removeAll();
    throw error;
  }
  // A test may stop the server itself (to see what happens after); close() then only cleans up.
  const stopServer = server.close;
  let stopping: Promise<void> | undefined;
  server.close = () => (stopping ??= stopServer());
  try {
    storage = await openStorageView(server.services);
  } catch (error) {
    await server.close();
    await removeAll();
    throw error;
  }
  const url = server.baseUrl;
  const doFetch = (pathname: string, init?: RequestInit) => fetch(`${url}${pathname}`, init);
  return {
    server,
    config,
    url,
    dataDir,
    storage,
    backendEnv: settingsEnv(backend.config),
    clock,
    fetch: doFetch,
    async account(options = {}) {
      const login = options.login ?? `user${++counter}-${process.pid}`;
      const now = server.services.clock();
      const days = options.premiumDays ?? 0;
      testPasswordHash ??= cheapPasswordHash(TEST_PASSWORD);
      const account = await server.services.store.accounts.create({
        login,
        passwordHash: await testPasswordHash,
        name: options.name ?? '',
        email: options.email ?? '',
        premiumStart: days > 0 ? now : null,
        premiumEnd: days > 0 ? Math.round(now + days * DAY_MS) : null,
        trafficLeft: options.trafficBytes ?? 0,
        isOperator: false,
        createdAt: now,
      });
      // The key through POST /apikeys, as a client gets it (tests count on the connection it leaves).
      const response = await doFetch('/apikeys', { method: 'POST', body: new URLSearchParams({ login, password: TEST_PASSWORD }) });
      const body = await response.text();
      // A site that gives no key for a password alone (--second-factor-required, --oidc-only): the profile's key.
      if (response.status === 403 && body.includes('errorPermissionDenied')) {
        return { account, login, password: TEST_PASSWORD, key: await server.services.accounts.apiKeyFor(account) };
      }
      const key = /<content type="text">([^<]+)<\/content>/.exec(body)?.[1];
      if (response.status !== 201 || !key) throw new Error(`POST /apikeys failed: ${response.status} ${body}`);
      return { account, login, password: TEST_PASSWORD, key };
    },
    async upload(key, name, content) {
      const form = new FormData();
      form.append('upload', new Blob([typeof content === 'string' ? content : new Uint8Array(content)]), name);
      const response = await doFetch('/files', { method: 'POST', headers: { Authorization: key }, body: form });
      const body = await response.text();
      return {
        response,
        body,
        id: /<entry>\s*<id>([^<]+)<\/id>/.exec(body)?.[1] ?? '',
        downloadLink: /title="download_link" href="([^"]+)"/.exec(body)?.[1] ?? '',
        deleteLink: /title="delete_link" href="([^"]+)"/.exec(body)?.[1] ?? '',
      };
    },
    sibling(overrides = {}) {
      // Its own name, as every server of a site has (a start settles its name's leftovers).
      const serverName = `sibling-${++counter}-${process.pid}`;
      return runTestServer({ ...config, serverName, ...overrides, dataDir }, backend, clock, async () => {});
    },
    async close() {
      try {
        await server.close();
      } finally {
        await storage.close();
        await removeAll();
      }
    },
  };
}

/** The code and message of an Atom error body. */
export function atomError(body: string): { code: string; message: string } | null {
  const match = /<feed[^>]*>\s*<title>Error<\/title>[\s\S]*<entry>\s*<title>([^<]+)<\/title>\s*<content type="text">([^<]*)<\/content>/.exec(body);
  return match ? { code: match[1]!, message: match[2]! } : null;
}
