import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/oidc-provider-server.js');

/** The test client registered at every provider these tests start. */
export const TEST_CLIENT = { id: 'filehaven-test', secret: 'test-client-secret-0123456789' };

export interface ProviderOptions {
  /** Redirect URIs the client may use (`{web_url}/signin/oidc/callback`). */
  redirectUris: string[];
  /** Shifts the provider's clock: -2 hours makes every ID token expired on arrival. */
  clockOffsetMs?: number;
  /** Alters the ID token of every token response on the way out (its signature kept). */
  tamperIdToken?: boolean;
}

export interface TestProvider {
  /** The issuer URL (`http://127.0.0.1:<port>`). */
  url: string;
  /** Kills the provider process; resolves once it is gone. */
  stop(): Promise<void>;
}

/**
 * Starts oidc-provider (test/fixtures/oidc-provider-server.js) as a separate process on
 * 127.0.0.1 with a random port: a real OpenID provider, not a mock.
 */
export async function startProvider(options: ProviderOptions): Promise<TestProvider> {
  const child: ChildProcess = spawn(process.execPath, [SCRIPT], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      OIDC_CLIENT_ID: TEST_CLIENT.id,
      OIDC_CLIENT_SECRET: TEST_CLIENT.secret,
      OIDC_REDIRECT_URIS: options.redirectUris.join(' '),
      OIDC_CLOCK_OFFSET_MS: String(options.clockOffsetMs ?? 0),
      OIDC_TAMPER_ID_TOKEN: options.tamperIdToken ? '1' : '0',
    },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    // A provider that did not start in time is killed: its pipes would keep the test
    // process alive after the test failed (a whole CI run once waited on one).
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the OpenID provider did not start within 30 s: ${stderr}`));
    }, 30_000);
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /listening (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the OpenID provider exited (${code}): ${stderr}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * A person at the provider: follows its redirects and submits its development login form
 * (any login; the login is the subject) and consent form, with its own cookies, until the
 * provider sends the browser back off its origin. Returns that URL (the callback).
 */
export async function signInAtProvider(authorizationUrl: string, login: string, jar = new Map<string, string>()): Promise<string> {
  const origin = new URL(authorizationUrl).origin;
  let url = authorizationUrl;
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 12; step++) {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, { method: body ? 'POST' : 'GET', body, redirect: 'manual', headers: cookie ? { Cookie: cookie } : {} });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const [name, value] = [pair.slice(0, eq).trim(), pair.slice(eq + 1).trim()];
      // Deleted cookies come back empty and dated 1970; live ones are kept whatever their date
      // (a provider with a shifted clock dates them in the past).
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    const text = await response.text();
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location') ?? '', url);
      if (next.origin !== origin) return next.href;
      url = next.href;
      body = undefined;
      continue;
    }
    const action = /<form[^>]*action="([^"]+)"/.exec(text)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(text)?.[1];
    if (response.status !== 200 || !action || !prompt) throw new Error(`the provider answered ${response.status}: ${text.slice(0, 500)}`);
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
    body = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any password' } : { prompt });
  }
  throw new Error('the provider never sent the browser back');
}
