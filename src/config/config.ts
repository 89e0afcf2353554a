import { readFileSync } from 'node:fs';
import { redactUrl } from './redact-url.js';
import { parseBytes, parseDuration } from './units.js';

/** The one validated configuration object the server and the CLI run on. */
export interface Config {
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Interface to bind. */
  host: string;
  /** Data folder: database, blobs, temp files, generated secret. */
  dataDir: string;
  /** {base_url}: where the API is served; null until known (derived from host and port). */
  publicUrl: string | null;
  /** {web_url}: public site; defaults to publicUrl. */
  webUrl: string | null;
  /** Server secret; null means "generate and keep in the data folder". */
  secret: string | null;
  /** Largest accepted file in bytes (API.md section 8: 10 GiB). */
  maxFileSize: number;
  /**
   * Largest body a tus client should send in one PATCH, advertised in
   * `Filehaven-Max-Chunk-Size`: under the body limit of any proxy in front of the site
   * (Cloudflare's is 100 MB). Advisory: a bigger PATCH that reaches the server is taken.
   */
  uploadChunkSize: number;
  /** Lifetime of a signed direct link. */
  directLinkTtlMs: number;
  /** Whether a direct download needs the Authorization header besides the signed URL (API.md 6). */
  directLinkRequiresKey: boolean;
  /** pino log level, or "silent". */
  logLevel: string;
  /** Bearer token `/metrics` requires; null = served to anyone who can reach the port. */
  metricsToken: string | null;
  /** Upload volume of a free account over a rolling 24 h, bytes; null = unlimited (API.md 8). */
  uploadVolumeFree: number | null;
  /** Upload volume of a premium account over a rolling 24 h, bytes; null = unlimited. */
  uploadVolumePremium: number | null;
  /** Failed sign-ins per minute per IP and per login before 429 (API.md 8). */
  loginAttemptsPerMinute: number;
  /** API requests per minute per API key; 0 = unlimited. */
  apiRatePerKey: number;
  /** API requests per minute per client IP; 0 = unlimited. */
  apiRatePerIp: number;
  /** Speed cap of one free download, bytes per second; null = unlimited. */
  freeDownloadSpeed: number | null;
  /** Concurrent free downloads per client IP; 0 = unlimited. */
  freeDownloadsPerIp: number;
  /** Whether X-Forwarded-For is trusted for the client IP (behind a reverse proxy). */
  trustProxy: boolean;
  /** How often the server runs gc (blobs and temp files); 0 = never. */
  gcIntervalMs: number;
  /** Temp files untouched this long are abandoned uploads; blobs younger than this are never collected. */
  tempGraceMs: number;
  /** Files not downloaded for this many days are deleted by gc; 0 = never (default). */
  expireAfterDays: number;
  /** A resumable upload must finish this long after it was created; gc removes it after. */
  uploadExpiryMs: number;
  /** Whether anyone may create an account on the web site (`open`) or only operators (`closed`). */
  signup: 'open' | 'closed';
  /** Whether every share and upload request must carry a password (issue 25). */
  sharePasswordRequired: boolean;
  /** Longest a share or upload request may live, ms; null = no cap (then "never" is allowed). */
  shareMaxExpiryMs: number | null;
  /** Expiry given to a new file when its upload names none, ms; null = never. */
  fileExpiryDefaultMs: number | null;
  /** Longest expiry a file may have, ms; null = no cap (then "never" is allowed). */
  fileExpiryMaxMs: number | null;
  /** Whether accounts may open upload requests (links where others upload into their folders). */
  uploadRequests: boolean;
  /** OpenID Connect issuer URL (discovery at `/.well-known/openid-configuration`); null = no single sign-on (issue 26). */
  oidcIssuer: string | null;
  /** The client id registered at the issuer, with the redirect URI `{web_url}/signin/oidc/callback`. */
  oidcClientId: string | null;
  /** The client secret; null for a public client (PKCE only). Never printed. */
  oidcClientSecret: string | null;
  /** A file holding the client secret (read at start, trimmed); wins over oidcClientSecret. */
  oidcClientSecretFile: string | null;
  /** The label of the sign-in button: "Sign in with <name>". */
  oidcName: string;
  /** Scopes asked for, space-separated; must include `openid`. */
  oidcScopes: string;
  /** Whether a provider identity linked to no account gets a new account (else a clear refusal). */
  oidcSignup: boolean;
  /** Whether password sign-in is hidden for everyone but operators recovering access. */
  oidcOnly: boolean;
  /** Who must have a second factor for password sign-in: nobody, operators, or everyone. */
  secondFactorRequired: 'none' | 'operators' | 'everyone';
  /** Whether accounts may register passkeys (WebAuthn) and sign in with them. */
  passkeys: boolean;
  /** Whether each account's files are served over WebDAV at {base_url}/dav/ (issue 27). */
  webdav: boolean;
  /** Whether WebDAV takes passwords over plain HTTP from other hosts than this one (behind TLS they never are plain). */
  webdavAllowHttp: boolean;
  /** Time a client has to send a request's whole head (request line and headers). */
  headersTimeoutMs: number;
  /** A connection with no byte in either direction for this long during a request is closed. */
  idleTimeoutMs: number;
  /** On SIGTERM, how long requests in progress (uploads too) may run on before they are cut. */
  shutdownGraceMs: number;
  /**
   * Connections with a request in progress per client address (IPv6 per /64); open ones,
   * idle keep-alive included, are bounded at 8 times this (connection-cap.ts says why).
   * 0 = unlimited. Not applied behind a trusted proxy.
   */
  maxConnectionsPerIp: number;
  /** PostgreSQL for metadata (`postgres://USER@HOST:PORT/DB`); null = SQLite in the data folder. */
  databaseUrl: string | null;
  /** The PostgreSQL schema holding the tables, created when missing. */
  databaseSchema: string;
  /** Most PostgreSQL connections one server opens. */
  databasePoolSize: number;
  /** Longest a request waits for a PostgreSQL connection when all are in use, in ms; then 503 with Retry-After. */
  databasePoolWaitMs: number;
  /**
   * This server's name, the same across its restarts and different from every other
   * server on the database: a start settles the transfers its earlier processes left
   * (issue 14). Null = the host name.
   */
  serverName: string | null;
  /**
   * Redis holding the limits servers share (sign-in and API request rates, free-download
   * slots); null = each server counts on its own.
   */
  redisUrl: string | null;
  /** Prefix of every Redis key this site writes, so several sites can share one Redis. */
  redisPrefix: string;
  /** S3 bucket for blobs; null = the data folder. */
  s3Bucket: string | null;
  /** S3-compatible endpoint URL; null = AWS, found from the region. */
  s3Endpoint: string | null;
  /** S3 region (signing). */
  s3Region: string;
  /** Path-style bucket addressing (`ENDPOINT/BUCKET/KEY`), which most S3-compatible servers need. */
  s3ForcePathStyle: boolean;
  /** Prefix of every object name in the bucket: '' or a path ending in '/'. */
  s3Prefix: string;
  /**
   * Request checksums of the AWS SDK: `when_required` sends plain bodies (what S3-compatible
   * servers accept), `when_supported` the SDK's aws-chunked CRC32 bodies; `auto` picks the
   * first with a custom endpoint and the second on AWS.
   */
  s3Checksums: 'auto' | 'when_required' | 'when_supported';
  /** Size of one multipart part; one upload holds up to (queue size + 1) parts in memory. */
  s3PartSize: number;
  /** Parts of one upload sent at once. */
  s3QueueSize: number;
}

/** One configurable setting: its flag, env variable, default and parser. */
interface Setting<K extends keyof Config> {
  key: K;
  flag: string;
  env: string;
  parse: (raw: string) => Config[K] | null | undefined;
  expected: string;
  description: string;
}

const text = (raw: string) => (raw.trim() === '' ? undefined : raw);
const url = (raw: string) => {
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
    return raw.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
};
/** A parser of URLs with one of `protocols` (`postgres:`), kept as given. */
const urlWith =
  (...protocols: string[]) =>
  (raw: string) => {
    try {
      return protocols.includes(new URL(raw).protocol) ? raw : undefined;
    } catch {
      return undefined;
    }
  };
const postgresUrl = urlWith('postgres:', 'postgresql:');
const redisUrl = urlWith('redis:', 'rediss:');
const MiB = 1024 ** 2;
const port = (raw: string) => (/^\d+$/.test(raw) && Number(raw) <= 65535 ? Number(raw) : undefined);
const count = (raw: string) => (/^\d+$/.test(raw.trim()) && Number.isSafeInteger(Number(raw)) ? Number(raw) : undefined);
const bool = (raw: string) => (/^(1|true|yes|on)$/i.test(raw) ? true : /^(0|false|no|off)$/i.test(raw) ? false : undefined);
const logLevel = (raw: string) => (['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(raw) ? raw : undefined);
const positiveBytes = (raw: string) => {
  const n = parseBytes(raw);
  return n !== null && n > 0 ? n : undefined;
};
/** A byte amount or `unlimited` (null). */
const bytesOrUnlimited = (raw: string) => (/^\s*unlimited\s*$/i.test(raw) ? null : positiveBytes(raw));
const duration = (min: number) => (raw: string) => {
  const n = parseDuration(raw);
  return n !== null && n >= min ? n : undefined;
};
/** A duration of at least a second, or `never` (null). */
const durationOrNever = (raw: string) => (/^\s*never\s*$/i.test(raw) ? null : duration(1000)(raw));

/** The settings table; the table in docs/configuration.md is written from it. */
export const SETTINGS = [
  { key: 'port', flag: 'port', env: 'FILEHAVEN_PORT', parse: port, expected: 'a port number 0-65535', description: 'TCP port to listen on' },
  { key: 'host', flag: 'host', env: 'FILEHAVEN_HOST', parse: text, expected: 'a host name or address', description: 'interface to bind' },
  { key: 'dataDir', flag: 'data', env: 'FILEHAVEN_DATA', parse: text, expected: 'a folder path', description: 'data folder (database, blobs, secret)' },
  {
    key: 'publicUrl',
    flag: 'public-url',
    env: 'FILEHAVEN_PUBLIC_URL',
    parse: url,
    expected: 'an http(s) URL',
    description: '{base_url} written into API responses',
  },
  {
    key: 'webUrl',
    flag: 'web-url',
    env: 'FILEHAVEN_WEB_URL',
    parse: url,
    expected: 'an http(s) URL',
    description: '{web_url} of download, folder and delete links',
  },
  {
    key: 'secret',
    flag: 'secret',
    env: 'FILEHAVEN_SECRET',
    parse: (raw: string) => (raw.length >= 16 ? raw : undefined),
    expected: 'at least 16 characters',
    description: 'server secret (key sealing, link signatures)',
  },
  {
    key: 'maxFileSize',
    flag: 'max-file-size',
    env: 'FILEHAVEN_MAX_FILE_SIZE',
    parse: positiveBytes,
    expected: 'a size of at least 1 byte, such as 10GiB or 1048576',
    description: 'largest accepted file',
  },
  {
    key: 'uploadChunkSize',
    flag: 'upload-chunk-size',
    env: 'FILEHAVEN_UPLOAD_CHUNK_SIZE',
    parse: (raw: string) => {
      const n = parseBytes(raw);
      return n !== null && n >= MiB ? n : undefined;
    },
    expected: 'a size of at least 1MiB, such as 64MiB',
    description: 'largest PATCH body a tus client should send (keep it under the body limit of any proxy in front)',
  },
  {
    key: 'directLinkTtlMs',
    flag: 'direct-link-ttl',
    env: 'FILEHAVEN_DIRECT_LINK_TTL',
    parse: duration(1),
    expected: 'a duration of at least 1ms, such as 24h or 30m',
    description: 'lifetime of a signed direct link',
  },
  {
    key: 'directLinkRequiresKey',
    flag: 'direct-link-requires-key',
    env: 'FILEHAVEN_DIRECT_LINK_REQUIRES_KEY',
    parse: bool,
    expected: 'true or false',
    description: 'direct downloads also need the Authorization header',
  },
  {
    key: 'logLevel',
    flag: 'log-level',
    env: 'FILEHAVEN_LOG_LEVEL',
    parse: logLevel,
    expected: 'fatal, error, warn, info, debug, trace or silent',
    description: 'log level',
  },
  // Visible ASCII only: it travels in an Authorization header.
  {
    key: 'metricsToken',
    flag: 'metrics-token',
    env: 'FILEHAVEN_METRICS_TOKEN',
    parse: (raw: string) => (/^[\x21-\x7e]{16,}$/.test(raw) ? raw : undefined),
    expected: 'at least 16 visible ASCII characters, no spaces',
    description: 'bearer token /metrics requires (default: none, served openly)',
  },
  {
    key: 'uploadVolumeFree',
    flag: 'upload-volume-free',
    env: 'FILEHAVEN_UPLOAD_VOLUME_FREE',
    parse: bytesOrUnlimited,
    expected: 'a size of at least 1 byte, such as 50GiB, or unlimited',
    description: 'upload volume of a free account per rolling 24 h',
  },
  {
    key: 'uploadVolumePremium',
    flag: 'upload-volume-premium',
    env: 'FILEHAVEN_UPLOAD_VOLUME_PREMIUM',
    parse: bytesOrUnlimited,
    expected: 'a size of at least 1 byte, such as 500GiB, or unlimited',
    description: 'upload volume of a premium account per rolling 24 h',
  },
  {
    key: 'loginAttemptsPerMinute',
    flag: 'login-attempts',
    env: 'FILEHAVEN_LOGIN_ATTEMPTS',
    parse: (raw: string) => {
      const n = count(raw);
      return n !== undefined && n > 0 ? n : undefined;
    },
    expected: 'a whole number, 1 or more',
    description: 'failed sign-ins per minute per IP and per login',
  },
  {
    key: 'apiRatePerKey',
    flag: 'api-rate-per-key',
    env: 'FILEHAVEN_API_RATE_PER_KEY',
    parse: count,
    expected: 'a whole number, 0 (unlimited) or more',
    description: 'API requests per minute per API key',
  },
  {
    key: 'apiRatePerIp',
    flag: 'api-rate-per-ip',
    env: 'FILEHAVEN_API_RATE_PER_IP',
    parse: count,
    expected: 'a whole number, 0 (unlimited) or more',
    description: 'API requests per minute per client IP',
  },
  {
    key: 'freeDownloadSpeed',
    flag: 'free-download-speed',
    env: 'FILEHAVEN_FREE_DOWNLOAD_SPEED',
    parse: bytesOrUnlimited,
    expected: 'bytes per second, at least 1, such as 2MiB, or unlimited',
    description: 'speed cap of one free download',
  },
  {
    key: 'freeDownloadsPerIp',
    flag: 'free-downloads-per-ip',
    env: 'FILEHAVEN_FREE_DOWNLOADS_PER_IP',
    parse: count,
    expected: 'a whole number, 0 (unlimited) or more',
    description: 'concurrent free downloads per client IP',
  },
  {
    key: 'trustProxy',
    flag: 'trust-proxy',
    env: 'FILEHAVEN_TRUST_PROXY',
    parse: bool,
    expected: 'true or false',
    description: 'take the client IP from X-Forwarded-For',
  },
  {
    key: 'gcIntervalMs',
    flag: 'gc-interval',
    env: 'FILEHAVEN_GC_INTERVAL',
    parse: duration(0),
    expected: 'a duration, 0 (never) or more, such as 1h',
    description: 'how often the server collects garbage',
  },
  {
    key: 'tempGraceMs',
    flag: 'temp-grace',
    env: 'FILEHAVEN_TEMP_GRACE',
    parse: duration(60_000),
    expected: 'a duration of at least 1m (shorter would collect uploads in progress), such as 1h',
    description: 'age before an untouched temp file or unreferenced blob is collected',
  },
  {
    key: 'uploadExpiryMs',
    flag: 'upload-expiry',
    env: 'FILEHAVEN_UPLOAD_EXPIRY',
    parse: duration(60_000),
    expected: 'a duration of at least 1m, such as 24h',
    description: 'time a resumable upload has to finish before gc removes it',
  },
  {
    key: 'expireAfterDays',
    flag: 'expire-after-days',
    env: 'FILEHAVEN_EXPIRE_AFTER_DAYS',
    parse: count,
    expected: 'a whole number of days, 0 (never) or more',
    description: 'delete files not downloaded for this many days',
  },
  {
    key: 'signup',
    flag: 'signup',
    env: 'FILEHAVEN_SIGNUP',
    parse: (raw: string) => (/^(open|closed)$/i.test(raw.trim()) ? (raw.trim().toLowerCase() as 'open' | 'closed') : undefined),
    expected: 'open or closed',
    description: 'whether visitors may create accounts at /signup',
  },
  {
    key: 'sharePasswordRequired',
    flag: 'share-password-required',
    env: 'FILEHAVEN_SHARE_PASSWORD_REQUIRED',
    parse: bool,
    expected: 'true or false',
    description: 'every share and upload request must carry a password',
  },
  {
    key: 'shareMaxExpiryMs',
    flag: 'share-max-expiry',
    env: 'FILEHAVEN_SHARE_MAX_EXPIRY',
    parse: durationOrNever,
    expected: 'a duration of at least 1s, such as 30d, or never',
    description: 'longest a share or upload request may live (also its default)',
  },
  {
    key: 'fileExpiryDefaultMs',
    flag: 'file-expiry-default',
    env: 'FILEHAVEN_FILE_EXPIRY_DEFAULT',
    parse: durationOrNever,
    expected: 'a duration of at least 1s, such as 30d, or never',
    description: 'expiry of a new file whose upload names none',
  },
  {
    key: 'fileExpiryMaxMs',
    flag: 'file-expiry-max',
    env: 'FILEHAVEN_FILE_EXPIRY_MAX',
    parse: durationOrNever,
    expected: 'a duration of at least 1s, such as 365d, or never',
    description: 'longest expiry a file may have',
  },
  {
    key: 'uploadRequests',
    flag: 'upload-requests',
    env: 'FILEHAVEN_UPLOAD_REQUESTS',
    parse: bool,
    expected: 'true or false',
    description: 'whether accounts may open upload requests',
  },
  {
    key: 'oidcIssuer',
    flag: 'oidc-issuer',
    env: 'FILEHAVEN_OIDC_ISSUER',
    parse: url,
    expected: 'an http or https URL, such as https://sso.example.com/realms/staff',
    description: 'OpenID Connect issuer for single sign-on (discovery from this URL)',
  },
  {
    key: 'oidcClientId',
    flag: 'oidc-client-id',
    env: 'FILEHAVEN_OIDC_CLIENT_ID',
    parse: text,
    expected: 'the client id registered at the issuer',
    description: 'client id at the issuer (redirect URI: {web_url}/signin/oidc/callback)',
  },
  {
    key: 'oidcClientSecret',
    flag: 'oidc-client-secret',
    env: 'FILEHAVEN_OIDC_CLIENT_SECRET',
    parse: text,
    expected: 'the client secret (better: FILEHAVEN_OIDC_CLIENT_SECRET or --oidc-client-secret-file)',
    description: 'client secret at the issuer; none for a public client',
  },
  {
    key: 'oidcClientSecretFile',
    flag: 'oidc-client-secret-file',
    env: 'FILEHAVEN_OIDC_CLIENT_SECRET_FILE',
    parse: text,
    expected: 'a file path',
    description: 'file holding the client secret',
  },
  {
    key: 'oidcName',
    flag: 'oidc-name',
    env: 'FILEHAVEN_OIDC_NAME',
    parse: (raw: string) => (raw.trim() !== '' && raw.trim().length <= 60 ? raw.trim() : undefined),
    expected: 'a label of 1 to 60 characters, such as "Company SSO"',
    description: 'label of the sign-in button ("Sign in with <name>")',
  },
  {
    key: 'oidcScopes',
    flag: 'oidc-scopes',
    env: 'FILEHAVEN_OIDC_SCOPES',
    parse: (raw: string) => {
      const scopes = raw
        .trim()
        .split(/[\s,]+/)
        .filter(Boolean);
      return scopes.includes('openid') && scopes.every((scope) => /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)) ? scopes.join(' ') : undefined;
    },
    expected: 'space-separated scopes including openid, such as "openid profile email"',
    description: 'scopes asked of the issuer',
  },
  {
    key: 'oidcSignup',
    flag: 'oidc-signup',
    env: 'FILEHAVEN_OIDC_SIGNUP',
    parse: bool,
    expected: 'true or false',
    description: 'whether a new single sign-on identity gets an account',
  },
  {
    key: 'oidcOnly',
    flag: 'oidc-only',
    env: 'FILEHAVEN_OIDC_ONLY',
    parse: bool,
    expected: 'true or false',
    description: 'hide password sign-in for all but operators recovering access',
  },
  {
    key: 'secondFactorRequired',
    flag: 'second-factor-required',
    env: 'FILEHAVEN_SECOND_FACTOR_REQUIRED',
    parse: (raw: string) => (/^(none|operators|everyone)$/i.test(raw.trim()) ? (raw.trim().toLowerCase() as 'none' | 'operators' | 'everyone') : undefined),
    expected: 'none, operators or everyone',
    description: 'who must pass a second factor (TOTP) to sign in with a password (a passkey sign-in is both factors)',
  },
  {
    key: 'passkeys',
    flag: 'passkeys',
    env: 'FILEHAVEN_PASSKEYS',
    parse: bool,
    expected: 'true or false',
    description: 'whether accounts may register passkeys and sign in with them',
  },
  {
    key: 'webdav',
    flag: 'webdav',
    env: 'FILEHAVEN_WEBDAV',
    parse: bool,
    expected: 'true or false',
    description: 'whether accounts reach their files over WebDAV at /dav/',
  },
  {
    key: 'webdavAllowHttp',
    flag: 'webdav-allow-http',
    env: 'FILEHAVEN_WEBDAV_ALLOW_HTTP',
    parse: bool,
    expected: 'true or false',
    description: 'whether WebDAV takes passwords over plain HTTP from other hosts',
  },
  {
    key: 'headersTimeoutMs',
    flag: 'headers-timeout',
    env: 'FILEHAVEN_HEADERS_TIMEOUT',
    parse: duration(1000),
    expected: 'a duration of at least 1s, such as 20s',
    description: 'time a client has to send a request head',
  },
  {
    key: 'shutdownGraceMs',
    flag: 'shutdown-grace',
    env: 'FILEHAVEN_SHUTDOWN_GRACE',
    parse: duration(0),
    expected: 'a duration, 0 (cut requests at once) or more, such as 30s',
    description: 'on SIGTERM, how long requests in progress may finish before they are cut',
  },
  {
    key: 'idleTimeoutMs',
    flag: 'idle-timeout',
    env: 'FILEHAVEN_IDLE_TIMEOUT',
    parse: duration(1000),
    expected: 'a duration of at least 1s, such as 60s',
    description: 'a request connection silent this long is closed',
  },
  {
    key: 'maxConnectionsPerIp',
    flag: 'max-connections-per-ip',
    env: 'FILEHAVEN_MAX_CONNECTIONS_PER_IP',
    parse: count,
    expected: 'a whole number, 0 (unlimited) or more',
    description: 'connections with a request in progress per client address (open ones: 8 times this)',
  },
  {
    key: 'databaseUrl',
    flag: 'database-url',
    env: 'FILEHAVEN_DATABASE_URL',
    parse: postgresUrl,
    expected: 'a URL such as postgres://filehaven@db.example:5432/filehaven',
    description: 'PostgreSQL for metadata (default: SQLite in the data folder)',
  },
  {
    key: 'databaseSchema',
    flag: 'database-schema',
    env: 'FILEHAVEN_DATABASE_SCHEMA',
    parse: (raw: string) => (/^[a-z_][a-z0-9_]{0,62}$/.test(raw) ? raw : undefined),
    expected: 'a lower-case schema name such as public',
    description: 'PostgreSQL schema of the tables (created when missing)',
  },
  {
    key: 'databasePoolSize',
    flag: 'database-pool-size',
    env: 'FILEHAVEN_DATABASE_POOL_SIZE',
    parse: (raw: string) => {
      const n = count(raw);
      return n !== undefined && n >= 1 && n <= 1000 ? n : undefined;
    },
    expected: 'a whole number from 1 to 1000',
    description: 'most PostgreSQL connections per server',
  },
  {
    key: 'databasePoolWaitMs',
    flag: 'database-pool-wait',
    env: 'FILEHAVEN_DATABASE_POOL_WAIT',
    parse: duration(1),
    expected: 'a duration of at least 1ms, such as 10s',
    description: 'longest a request waits for a PostgreSQL connection when all are in use (then 503)',
  },
  {
    key: 'serverName',
    flag: 'server-name',
    env: 'FILEHAVEN_SERVER_NAME',
    parse: (raw: string) => (/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(raw) ? raw : undefined),
    expected: 'a name of letters, digits and . _ : - (at most 128)',
    description: 'name of this server, unique among servers sharing a database (default: the host name)',
  },
  {
    key: 'redisUrl',
    flag: 'redis-url',
    env: 'FILEHAVEN_REDIS_URL',
    parse: redisUrl,
    expected: 'a URL such as redis://redis.example:6379/0',
    description: 'Redis for the limits several servers share (default: each server counts alone)',
  },
  {
    key: 'redisPrefix',
    flag: 'redis-prefix',
    env: 'FILEHAVEN_REDIS_PREFIX',
    parse: (raw: string) => (/^[A-Za-z0-9._:-]{1,64}$/.test(raw) ? raw : undefined),
    expected: 'letters, digits and . _ : - (at most 64), such as filehaven:',
    description: 'prefix of the Redis keys of this site',
  },
  {
    key: 's3Bucket',
    flag: 's3-bucket',
    env: 'FILEHAVEN_S3_BUCKET',
    parse: (raw: string) => (/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(raw) ? raw : undefined),
    expected: 'an S3 bucket name (3-63 lower-case letters, digits, dots, hyphens)',
    description: 'S3 bucket for blobs (default: the data folder)',
  },
  {
    key: 's3Endpoint',
    flag: 's3-endpoint',
    env: 'FILEHAVEN_S3_ENDPOINT',
    parse: url,
    expected: 'an http(s) URL',
    description: 'S3-compatible endpoint (default: AWS)',
  },
  {
    key: 's3Region',
    flag: 's3-region',
    env: 'FILEHAVEN_S3_REGION',
    parse: (raw: string) => (/^[a-z0-9-]{1,64}$/.test(raw) ? raw : undefined),
    expected: 'a region such as us-east-1',
    description: 'S3 region',
  },
  {
    key: 's3ForcePathStyle',
    flag: 's3-force-path-style',
    env: 'FILEHAVEN_S3_FORCE_PATH_STYLE',
    parse: bool,
    expected: 'true or false',
    description: 'path-style bucket addressing (most S3-compatible servers)',
  },
  {
    key: 's3Prefix',
    flag: 's3-prefix',
    env: 'FILEHAVEN_S3_PREFIX',
    parse: (raw: string) =>
      raw === '' || (/^[A-Za-z0-9!_.*'()-]+(\/[A-Za-z0-9!_.*'()-]+)*\/$/.test(raw) && !raw.split('/').some((segment) => segment === '.' || segment === '..'))
        ? raw
        : undefined,
    expected: "'' or a path ending in / such as filehaven/",
    description: 'prefix of every object name in the bucket',
  },
  {
    key: 's3Checksums',
    flag: 's3-checksums',
    env: 'FILEHAVEN_S3_CHECKSUMS',
    parse: (raw: string) => (/^(auto|when_required|when_supported)$/.test(raw) ? (raw as Config['s3Checksums']) : undefined),
    expected: 'auto, when_required or when_supported',
    description: 'AWS SDK request checksums (auto: when_required with --s3-endpoint)',
  },
  {
    key: 's3PartSize',
    flag: 's3-part-size',
    env: 'FILEHAVEN_S3_PART_SIZE',
    parse: (raw: string) => {
      const n = parseBytes(raw);
      return n !== null && n >= 5 * MiB && n <= 5 * 1024 * MiB ? n : undefined;
    },
    expected: 'a size from 5MiB to 5GiB',
    description: 'S3 multipart part size (memory per upload: part size x (queue size + 1))',
  },
  {
    key: 's3QueueSize',
    flag: 's3-queue-size',
    env: 'FILEHAVEN_S3_QUEUE_SIZE',
    parse: (raw: string) => {
      const n = count(raw);
      return n !== undefined && n >= 1 && n <= 16 ? n : undefined;
    },
    expected: 'a whole number from 1 to 16',
    description: 'S3 parts of one upload sent at once',
  },
] as const satisfies readonly Setting<keyof Config>[];

const GiB = 1024 ** 3;

/** Settings whose value is a secret. */
const SECRET_SETTINGS: ReadonlySet<keyof Config> = new Set<keyof Config>(['secret', 'metricsToken', 'oidcClientSecret']);
/** URLs that may hold a password. */
const URL_SETTINGS: ReadonlySet<keyof Config> = new Set<keyof Config>(['databaseUrl', 'redisUrl']);

export const DEFAULTS: Config = {
  port: 8080,
  host: '127.0.0.1',
  dataDir: './data',
  publicUrl: null,
  webUrl: null,
  secret: null,
  maxFileSize: 10 * GiB,
  // Under Cloudflare's 100 MB request body limit, and few requests even for a 10 GiB file.
  uploadChunkSize: 64 * 1024 ** 2,
  directLinkTtlMs: 24 * 3_600_000,
  directLinkRequiresKey: true,
  logLevel: 'info',
  metricsToken: null,
  uploadVolumeFree: 50 * GiB,
  uploadVolumePremium: null,
  loginAttemptsPerMinute: 10,
  apiRatePerKey: 600,
  apiRatePerIp: 1200,
  freeDownloadSpeed: null,
  freeDownloadsPerIp: 4,
  trustProxy: false,
  gcIntervalMs: 3_600_000,
  tempGraceMs: 3_600_000,
  expireAfterDays: 0,
  uploadExpiryMs: 24 * 3_600_000,
  signup: 'closed',
  sharePasswordRequired: false,
  shareMaxExpiryMs: null,
  fileExpiryDefaultMs: null,
  fileExpiryMaxMs: null,
  uploadRequests: true,
  oidcIssuer: null,
  oidcClientId: null,
  oidcClientSecret: null,
  oidcClientSecretFile: null,
  oidcName: 'single sign-on',
  oidcScopes: 'openid profile email',
  oidcSignup: false,
  oidcOnly: false,
  secondFactorRequired: 'none',
  passkeys: true,
  webdav: true,
  webdavAllowHttp: false,
  headersTimeoutMs: 20_000,
  idleTimeoutMs: 60_000,
  shutdownGraceMs: 30_000,
  maxConnectionsPerIp: 64,
  databaseUrl: null,
  redisUrl: null,
  redisPrefix: 'filehaven:',
  databaseSchema: 'public',
  databasePoolSize: 20,
  databasePoolWaitMs: 10_000,
  serverName: null,
  s3Bucket: null,
  s3Endpoint: null,
  s3Region: 'us-east-1',
  s3ForcePathStyle: false,
  s3Prefix: '',
  s3Checksums: 'auto',
  s3PartSize: 8 * 1024 ** 2,
  s3QueueSize: 4,
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The flag naming the config file, and its environment variable. */
export const CONFIG_FILE_FLAG = 'config';
export const CONFIG_FILE_ENV = 'FILEHAVEN_CONFIG';

/**
 * Reads a JSON config file: an object whose keys are flag names (`"max-file-size":
 * "10GiB"`), values strings, numbers or booleans. Unknown keys are errors, so a typo
 * never silently falls back to a default.
 */
export function readConfigFile(file: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new ConfigError(`cannot read config file ${file}: ${reason}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${file} must hold a JSON object`);
  }
  const known = new Set<string>(SETTINGS.map((s) => s.flag));
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!known.has(key)) throw new ConfigError(`config file ${file}: unknown setting "${key}"`);
    if (!['string', 'number', 'boolean'].includes(typeof value)) {
      throw new ConfigError(`config file ${file}: "${key}" must be a string, number or boolean`);
    }
    values[key] = String(value);
  }
  return values;
}

/**
 * Builds the Config from defaults, then the config file (`--config` or FILEHAVEN_CONFIG),
 * then environment, then flags (flags win). Throws ConfigError naming the flag, variable
 * or file and what was expected.
 */
export function loadConfig(flags: Record<string, string | undefined>, env: NodeJS.ProcessEnv): Config {
  const configFile = flags[CONFIG_FILE_FLAG] ?? env[CONFIG_FILE_ENV];
  const fromFile = configFile ? readConfigFile(configFile) : {};
  const config: Record<string, unknown> = { ...DEFAULTS };
  for (const setting of SETTINGS) {
    const sources: Array<[string | undefined, string]> = [
      [flags[setting.flag], `--${setting.flag}`],
      [env[setting.env], setting.env],
      [fromFile[setting.flag], `"${setting.flag}" in ${configFile}`],
    ];
    const found = sources.find(([raw]) => raw !== undefined);
    if (!found) continue;
    const [raw, source] = found as [string, string];
    const value = (setting.parse as (raw: string) => unknown)(raw);
    if (value === undefined) throw new ConfigError(refusal(setting, raw, source));
    config[setting.key] = value;
  }
  return config as unknown as Config;
}

/** Why `raw`, given at `source` (`--port`, FILEHAVEN_PORT, a file), is no value of `setting`. */
function refusal(setting: (typeof SETTINGS)[number], raw: string, source: string): string {
  // Secrets are never repeated, and URLs only without their passwords: the message lands in logs.
  const shown =
    URL_SETTINGS.has(setting.key) && redactUrl(raw) !== '(unparsable URL)'
      ? `"${redactUrl(raw)}"`
      : SECRET_SETTINGS.has(setting.key) || URL_SETTINGS.has(setting.key)
        ? '(value not shown: it may hold a secret)'
        : `"${raw}"`;
  return `invalid ${source} ${shown}: expected ${setting.expected}`;
}

/**
 * The refusal of the first settings flag whose value its setting does not take (the
 * message loadConfig's ConfigError would carry), or null. A command calls it while it
 * parses its arguments: a wrong value typed on the command line is a usage error (exit
 * code 2), one in the environment or the config file a configuration error (1).
 */
export function refusedSettingFlag(flags: Record<string, string | undefined>): string | null {
  for (const setting of SETTINGS) {
    const raw = flags[setting.flag];
    if (raw !== undefined && (setting.parse as (raw: string) => unknown)(raw) === undefined) return refusal(setting, raw, `--${setting.flag}`);
  }
  return null;
}

/** The public URLs once the listening address is known. */
export function resolveUrls(config: Config, listening: { host: string; port: number }): { baseUrl: string; webUrl: string } {
  const host = listening.host === '0.0.0.0' || listening.host === '::' ? '127.0.0.1' : listening.host;
  const shown = host.includes(':') ? `[${host}]` : host;
  const baseUrl = config.publicUrl ?? `http://${shown}:${listening.port}`;
  return { baseUrl, webUrl: config.webUrl ?? baseUrl };
}
