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
  /** Lifetime of a signed direct link. */
  directLinkTtlMs: number;
  /** Whether a direct download needs the Authorization header besides the signed URL (API.md 6). */
  directLinkRequiresKey: boolean;
  /** pino log level, or "silent". */
  logLevel: string;
}

/** One configurable setting: its flag, env variable, default and parser. */
interface Setting<K extends keyof Config> {
  key: K;
  flag: string;
  env: string;
  parse: (raw: string) => Config[K] | null;
  expected: string;
  description: string;
}

const text = (raw: string) => (raw.trim() === '' ? null : raw);
const url = (raw: string) => {
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
    return raw.replace(/\/+$/, '');
  } catch {
    return null;
  }
};
const port = (raw: string) => (/^\d+$/.test(raw) && Number(raw) <= 65535 ? Number(raw) : null);
const bool = (raw: string) =>
  /^(1|true|yes|on)$/i.test(raw) ? true : /^(0|false|no|off)$/i.test(raw) ? false : null;
const logLevel = (raw: string) =>
  ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(raw) ? raw : null;

/** The settings table; the README's configuration table is written from it. */
export const SETTINGS = [
  { key: 'port', flag: 'port', env: 'FILEHAVEN_PORT', parse: port, expected: 'a port number 0-65535', description: 'TCP port to listen on' },
  { key: 'host', flag: 'host', env: 'FILEHAVEN_HOST', parse: text, expected: 'a host name or address', description: 'interface to bind' },
  { key: 'dataDir', flag: 'data', env: 'FILEHAVEN_DATA', parse: text, expected: 'a folder path', description: 'data folder (database, blobs, secret)' },
  { key: 'publicUrl', flag: 'public-url', env: 'FILEHAVEN_PUBLIC_URL', parse: url, expected: 'an http(s) URL', description: '{base_url} written into API responses' },
  { key: 'webUrl', flag: 'web-url', env: 'FILEHAVEN_WEB_URL', parse: url, expected: 'an http(s) URL', description: '{web_url} of download, folder and delete links' },
  { key: 'secret', flag: 'secret', env: 'FILEHAVEN_SECRET', parse: (raw: string) => (raw.length >= 16 ? raw : null), expected: 'at least 16 characters', description: 'server secret (key sealing, link signatures)' },
  { key: 'maxFileSize', flag: 'max-file-size', env: 'FILEHAVEN_MAX_FILE_SIZE', parse: (raw: string) => { const n = parseBytes(raw); return n !== null && n > 0 ? n : null; }, expected: 'a size such as 10GiB or 1048576', description: 'largest accepted file' },
  { key: 'directLinkTtlMs', flag: 'direct-link-ttl', env: 'FILEHAVEN_DIRECT_LINK_TTL', parse: (raw: string) => { const n = parseDuration(raw); return n !== null && n > 0 ? n : null; }, expected: 'a duration such as 24h or 30m', description: 'lifetime of a signed direct link' },
  { key: 'directLinkRequiresKey', flag: 'direct-link-requires-key', env: 'FILEHAVEN_DIRECT_LINK_REQUIRES_KEY', parse: bool, expected: 'true or false', description: 'direct downloads also need the Authorization header' },
  { key: 'logLevel', flag: 'log-level', env: 'FILEHAVEN_LOG_LEVEL', parse: logLevel, expected: 'fatal, error, warn, info, debug, trace or silent', description: 'log level' },
] as const satisfies readonly Setting<keyof Config>[];

export const DEFAULTS: Config = {
  port: 8080,
  host: '127.0.0.1',
  dataDir: './data',
  publicUrl: null,
  webUrl: null,
  secret: null,
  maxFileSize: 10 * 1024 ** 3,
  directLinkTtlMs: 24 * 3_600_000,
  directLinkRequiresKey: true,
  logLevel: 'info',
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Builds the Config from defaults, then environment, then flags (flags win).
 * Throws ConfigError naming the flag or variable and what was expected.
 */
export function loadConfig(flags: Record<string, string | undefined>, env: NodeJS.ProcessEnv): Config {
  const config: Record<string, unknown> = { ...DEFAULTS };
  for (const setting of SETTINGS) {
    const fromFlag = flags[setting.flag];
    const fromEnv = env[setting.env];
    const [raw, source] =
      fromFlag !== undefined ? [fromFlag, `--${setting.flag}`] : fromEnv !== undefined ? [fromEnv, setting.env] : [undefined, ''];
    if (raw === undefined) continue;
    const value = (setting.parse as (raw: string) => unknown)(raw);
    if (value === null) throw new ConfigError(`invalid ${source} "${raw}": expected ${setting.expected}`);
    config[setting.key] = value;
  }
  return config as unknown as Config;
}

/** The public URLs once the listening address is known. */
export function resolveUrls(config: Config, listening: { host: string; port: number }): { baseUrl: string; webUrl: string } {
  const host = listening.host === '0.0.0.0' || listening.host === '::' ? '127.0.0.1' : listening.host;
  const shown = host.includes(':') ? `[${host}]` : host;
  const baseUrl = config.publicUrl ?? `http://${shown}:${listening.port}`;
  return { baseUrl, webUrl: config.webUrl ?? baseUrl };
}
