/**
 * A minimal browser for page tests: a cookie jar over fetch, redirects not followed, so
 * every Set-Cookie and Location can be checked. No JavaScript, like a browser with it off.
 */
export class Browser {
  /** Cookies the browser would send: name → value. */
  readonly cookies = new Map<string, string>();

  constructor(
    private readonly baseUrl: string,
    /** Headers sent with every request (e.g. X-Forwarded-Proto). */
    private readonly headers: Record<string, string> = {},
  ) {}

  /** The Cookie header the jar sends, or undefined when empty. */
  cookieHeader(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async get(pathname: string): Promise<Page> {
    return this.request(pathname, { method: 'GET' });
  }

  /** A url-encoded form POST, as a browser submits a <form method="post">. */
  async post(pathname: string, fields: Record<string, string>): Promise<Page> {
    return this.request(pathname, { method: 'POST', body: new URLSearchParams(fields) });
  }

  /** GETs a page and returns the CSRF token of its first form with one. */
  async csrfFrom(pathname: string): Promise<string> {
    const page = await this.get(pathname);
    const token = csrfOf(page.body);
    if (!token) throw new Error(`no CSRF field on ${pathname} (${page.status}): ${page.body}`);
    return token;
  }

  /** Fills in and submits the sign-in form. */
  async signIn(login: string, password: string): Promise<Page> {
    const csrf = await this.csrfFrom('/signin');
    return this.post('/signin', { csrf, login, password });
  }

  private async request(pathname: string, init: RequestInit): Promise<Page> {
    const cookie = this.cookieHeader();
    const response = await fetch(`${this.baseUrl}${pathname}`, {
      ...init,
      redirect: 'manual',
      headers: { Accept: 'text/html', ...this.headers, ...(cookie ? { Cookie: cookie } : {}) },
    });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const parsed = parseSetCookie(line);
      if (parsed.value === '' || parsed.attributes.get('max-age') === '0') this.cookies.delete(parsed.name);
      else this.cookies.set(parsed.name, parsed.value);
    }
    return { response, status: response.status, body: await response.text(), setCookies };
  }
}

/** One answered request. */
export interface Page {
  response: Response;
  status: number;
  body: string;
  /** The raw Set-Cookie lines. */
  setCookies: string[];
}

/** A Set-Cookie line: name, value and attributes (lower-cased names; flags map to ''). */
export function parseSetCookie(line: string): { name: string; value: string; attributes: Map<string, string> } {
  const [pair = '', ...rest] = line.split(';').map((part) => part.trim());
  const eq = pair.indexOf('=');
  const attributes = new Map<string, string>();
  for (const part of rest) {
    const at = part.indexOf('=');
    attributes.set((at < 0 ? part : part.slice(0, at)).toLowerCase(), at < 0 ? '' : part.slice(at + 1));
  }
  return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes };
}

/** The Set-Cookie line for one cookie name, parsed; undefined when not set. */
export function setCookieFor(page: Page, name: string): ReturnType<typeof parseSetCookie> | undefined {
  return page.setCookies.map(parseSetCookie).find((cookie) => cookie.name === name);
}

/** The value of the first hidden `csrf` field of a page. */
export function csrfOf(body: string): string | undefined {
  return /<input type="hidden" name="csrf" value="([^"]*)">/.exec(body)?.[1];
}
