import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { BasicCredentials } from './auth/basic-credentials.js';
import { OidcService } from './auth/oidc-service.js';
import { oidcSettings } from './auth/oidc-settings.js';
import { PasskeysService } from './auth/passkeys-service.js';
import { SecondFactorService } from './auth/second-factor-service.js';
import { SessionService } from './auth/session-service.js';
import { SignInChallenges } from './auth/sign-in-challenges.js';
import { SignUpService } from './auth/sign-up-service.js';
import type { BlobStore } from './blob/blob-store.js';
import type { ResumableStorage } from './blob/resumable-storage.js';
import { type Config, ConfigError } from './config/config.js';
import { loadOrCreateSecret } from './config/secret-file.js';
import { openConfiguredBlobStore, openConfiguredMetadataStore, openResumableStorage, openThumbnailStore } from './configured-stores.js';
import type { MetadataStore } from './db/repositories/repositories.js';
import { type Clock, cryptoIds, type IdSource, systemClock } from './domain/ids.js';
import { DirectLinks } from './downloads/direct-links.js';
import { DownloadCosts } from './downloads/download-costs.js';
import { DownloadCounts } from './downloads/download-counts.js';
import { DownloadsService } from './downloads/downloads-service.js';
import { fileBytes } from './downloads/file-bytes.js';
import { FolderArchiveService } from './downloads/folder-archive-service.js';
import { ShareCounts } from './downloads/share-counts.js';
import { createLimits, type Limits } from './limits/limits.js';
import { RedisConnection } from './limits/redis-connection.js';
import { ReservationsService } from './limits/reservations-service.js';
import { Metrics } from './observability/metrics.js';
import { UploadLocker } from './resumable/upload-locker.js';
import { constantTimeEqual, SECRET_FINGERPRINT_SETTING, ServerSecrets } from './security/secrets.js';
import { AccountsService } from './services/accounts-service.js';
import { AuditService } from './services/audit-service.js';
import { FilesService } from './services/files-service.js';
import { FoldersService } from './services/folders-service.js';
import { GcService } from './services/gc-service.js';
import { ListingService } from './services/listing-service.js';
import { ModerationService } from './services/moderation-service.js';
import { OperatorActionsService } from './services/operator-actions-service.js';
import { OperatorSearchService } from './services/operator-search-service.js';
import { StatsHistoryService } from './services/stats-history-service.js';
import { ThumbnailsService } from './services/thumbnails-service.js';
import { LinkAccess } from './sharing/link-access.js';
import { OperatorSharingService } from './sharing/operator-sharing-service.js';
import { RequestSlots } from './sharing/request-slots.js';
import { ShareRefs } from './sharing/share-refs.js';
import { SharesService } from './sharing/shares-service.js';
import { UploadRequestsService } from './sharing/upload-requests-service.js';
import { ResumableDataStore } from './uploads/resumable-data-store.js';
import { ResumableUploadsService } from './uploads/resumable-uploads-service.js';
import { UploadsService } from './uploads/uploads-service.js';
import { DavLocks } from './webdav/dav-locks.js';
import { DavProperties } from './webdav/dav-properties.js';
import { DavTree } from './webdav/dav-tree.js';

/** Everything the HTTP layer and the CLI call; one instance per process. */
export interface Services {
  config: Config;
  store: MetadataStore;
  blobs: BlobStore;
  clock: Clock;
  accounts: AccountsService;
  files: FilesService;
  /** The upload use case every upload entry point calls (API, web form, tus finish). */
  uploads: UploadsService;
  /** Resumable (tus) uploads: the use case, the tus store over it, and the shared lock. */
  resumable: { service: ResumableUploadsService; dataStore: ResumableDataStore; locker: UploadLocker; storage: ResumableStorage };
  folders: FoldersService;
  /** Pages of an account's files and folders (GET /files, /folders, My files). */
  listing: ListingService;
  /** Thumbnails of image files, made once per digest and stored beside the blobs. */
  thumbnails: ThumbnailsService;
  /** The download use case every download entry point calls: what a download costs, charged and counted. */
  downloads: DownloadsService;
  /** Share links (issue 25): the owner's side and the visitor's (open, password, target). */
  shares: SharesService;
  /** Premium direct links: issued, then checked on each download. */
  directLinks: DirectLinks;
  /** Bytes taken for transfers in flight (traffic, upload volume), kept as rows that outlive a crash. */
  reservations: ReservationsService;
  /** Upload volume, sign-in, API rate and free download limits (API.md 8); one set per server. */
  limits: Limits;
  /** Housekeeping: gc runs and store statistics. */
  gc: GcService;
  /** Operator-only: file-name blacklist, file reports. */
  moderation: ModerationService;
  /** The audit log of operator actions. */
  audit: AuditService;
  /** Operators' audited changes, searches and history: one use case for the CLI and the web console. */
  operator: { actions: OperatorActionsService; search: OperatorSearchService; history: StatsHistoryService; sharing: OperatorSharingService };
  /** This server's Prometheus metrics (`/metrics`); counted where each event happens. */
  metrics: Metrics;
  /** Upload requests (issue 25): links where others upload into an account's folder. */
  uploadRequests: UploadRequestsService;
  /** Web sign-in sessions and their CSRF tokens. */
  sessions: SessionService;
  /** Self-service accounts on the web site (`--signup open`). */
  signUp: SignUpService;
  /** State of sign-ins in progress (OIDC, passkeys, a second factor), shared by every server (issue 26). */
  signInChallenges: SignInChallenges;
  /** Passkeys (WebAuthn, issue 26): registered from the profile, a way to sign in that counts as both factors. */
  passkeys: PasskeysService;
  /** TOTP and recovery codes: set-up, sign-in checks, the operator's reset (issue 26). */
  secondFactors: SecondFactorService;
  /** Single sign-on through OpenID Connect (issue 26); null when no issuer is configured. */
  oidc: OidcService | null;
  /** WebDAV (issue 27): the tree as paths, Basic credentials, locks and dead properties. */
  dav: { tree: DavTree; credentials: BasicCredentials; locks: DavLocks; properties: DavProperties };
  /** null when the database and the blob store answer; else which one does not (`/readyz`). */
  readiness(): Promise<string | null>;
  /** Closes the database. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  clock?: Clock;
  ids?: IdSource;
  log?: (error: unknown, message: string) => void;
  /** A warning for the operator (a `<data>/secret` others may read); stderr when not given. */
  warn?: (message: string) => void;
  /**
   * Whether a missing data folder is created (default true): `serve` and `init` set a site up, the
   * other commands run on an existing one (config/site-folder.ts) and create nothing.
   */
  createDataFolder?: boolean;
}

/** The services, wired to the storage backends the configuration names (configured-stores.ts). */
export async function openServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? cryptoIds;
  const log = options.log ?? ((error, message) => console.error(message, error));
  const warn = options.warn ?? ((message) => console.error(message));
  // Owner only when filehaven makes it (it holds the secret and the database); a folder the
  // operator made keeps the mode they gave it (issue 14).
  if (options.createDataFolder !== false) await createDataFolder(config.dataDir);
  // Checked before anything is opened: flags that do not go together stop the start.
  const oidcConfig = oidcSettings(config);
  const secrets = new ServerSecrets(await loadOrCreateSecret(config.dataDir, config.secret, warn));
  const store = await openConfiguredMetadataStore(config, log);
  let blobs: BlobStore;
  try {
    await checkSecretFingerprint(store, secrets);
    blobs = await openConfiguredBlobStore(config);
  } catch (error) {
    await store.close();
    throw error;
  }

  const redis =
    config.redisUrl === null
      ? null
      : await RedisConnection.open({ url: config.redisUrl, prefix: config.redisPrefix, warn, onFallback: (reason) => metrics.limitFellBack(reason) });
  const metrics = new Metrics({ connections: () => store.connections(), clock, redisConnected: () => (redis ? redis.ready : null) });
  const accounts = new AccountsService({ store, secrets, ids, clock });
  const server = config.serverName ?? hostname();
  const instance = ids.processId();
  const reservations = new ReservationsService({ store, clock, server, instance, report: log, metrics });
  const fileExpiry = { defaultMs: config.fileExpiryDefaultMs, maxMs: config.fileExpiryMaxMs };
  const files = new FilesService({ store, blobs, ids, clock, fileExpiry, log });
  const folders = new FoldersService({ store, ids, clock, files });
  const listing = new ListingService({ store, folders, clock });
  const bytes = fileBytes(store, blobs);
  const directLinks = new DirectLinks({
    store,
    secrets,
    accounts,
    files,
    clock,
    directLinkTtlMs: config.directLinkTtlMs,
    directLinkRequiresKey: config.directLinkRequiresKey,
  });
  const thumbs = await openThumbnailStore(config, blobs);
  const thumbnails = new ThumbnailsService({ thumbs, store, downloads: bytes, clock, log });
  const moderation = new ModerationService({ store, clock });
  const audit = new AuditService({ store, clock });
  const sessions = new SessionService({ store, accounts, secrets, clock });
  const signInChallenges = new SignInChallenges({ store, clock });
  const passkeys = new PasskeysService({ store, challenges: signInChallenges, clock });
  const oidc = oidcConfig && new OidcService({ settings: oidcConfig, store, accounts, challenges: signInChallenges, clock, passkeys: config.passkeys });
  // Under --oidc-only accounts come from single sign-on (--oidc-signup): no page offers sign-up.
  const signUp = new SignUpService({ accounts, mode: config.oidcOnly ? 'closed' : config.signup });
  const secondFactors = new SecondFactorService({ store, secrets, accounts, audit, clock, required: config.secondFactorRequired });
  const operator = {
    actions: new OperatorActionsService({ accounts, files, moderation, sessions, audit }),
    search: new OperatorSearchService({ store }),
    history: new StatsHistoryService({ store, clock }),
    sharing: new OperatorSharingService({ store, clock, audit }),
  };
  const limits = createLimits(config, {
    store,
    reservations,
    clock,
    isPremium: (account) => accounts.isPremium(account),
    log,
    keyedHash: (text) => secrets.sign(text),
    redis,
    refused: (limit) => metrics.limitRefused(limit),
  });
  const downloadCounts = new DownloadCounts({ store, clock, report: log });
  const downloads = new DownloadsService({
    costs: new DownloadCosts({ freeDownloads: limits.freeDownloads, reservations, isPremium: (account) => accounts.isPremium(account) }),
    bytes,
    archives: new FolderArchiveService({ store, downloads: bytes, clock }),
    counts: downloadCounts,
    metrics,
    shareCounts: new ShareCounts({ store, clock }),
  });
  // One signer of the per-link cookies for shares and upload requests alike.
  const linkAccess = new LinkAccess(secrets);
  const shares = new SharesService({
    store,
    files,
    folders,
    audit,
    throttle: limits.linkPasswords,
    linkAccess,
    refs: new ShareRefs(secrets),
    ids,
    clock,
    rules: { passwordRequired: config.sharePasswordRequired, maxExpiryMs: config.shareMaxExpiryMs },
  });
  const uploads = new UploadsService({ store, blobs, ids, clock, volume: limits.uploads, folders, maxFileSize: config.maxFileSize, fileExpiry, metrics, log });
  const requestSlots = new RequestSlots({ store, clock, report: log });
  const uploadRequests = new UploadRequestsService({
    store,
    ids,
    clock,
    settings: config,
    folders,
    accounts,
    uploads,
    slots: requestSlots,
    linkAccess,
    linkPasswords: limits.linkPasswords,
    audit,
  });
  const resumableStorage = await openResumableStorage(config, blobs);
  const locker = new UploadLocker({ locks: store.uploadLocks, clock: systemClock, server, instance, report: log });
  const resumableService = new ResumableUploadsService({
    store,
    storage: resumableStorage,
    files,
    uploads,
    locker,
    clock,
    expiryMs: config.uploadExpiryMs,
    log,
    digestReread: (bytes) => metrics.resumableDigestReread(bytes),
    requestSlots,
  });
  const resumable = { service: resumableService, dataStore: new ResumableDataStore(resumableStorage, resumableService), locker, storage: resumableStorage };
  const gc = new GcService({
    store,
    blobs,
    files,
    reservations,
    clock,
    // File modification times come from the real clock, whatever clock the metadata uses.
    fileClock: systemClock,
    tempGraceMs: config.tempGraceMs,
    expireAfterDays: config.expireAfterDays,
    holder: `${server} ${instance}`,
    metrics,
    resumable: resumableService,
    thumbnails: thumbs,
  });

  const dav = {
    tree: new DavTree({ store, clock }),
    credentials: new BasicCredentials({
      store,
      accounts,
      throttle: limits.signIn,
      clock,
      rules: { oidcOnly: config.oidcOnly, secondFactorRequired: config.secondFactorRequired },
    }),
    locks: new DavLocks({ store, clock }),
    properties: new DavProperties({ store }),
  };

  return {
    config,
    store,
    blobs,
    clock,
    accounts,
    files,
    uploads,
    resumable,
    folders,
    listing,
    thumbnails,
    downloads,
    shares,
    directLinks,
    reservations,
    limits,
    moderation,
    audit,
    operator,
    gc,
    metrics,
    uploadRequests,
    sessions,
    signUp,
    signInChallenges,
    passkeys,
    secondFactors,
    oidc,
    dav,
    readiness: async () => {
      try {
        await store.ping();
      } catch {
        return 'the database does not answer';
      }
      if (store.durabilityLost() !== null) return 'the database lost durability (a failed fsync): restart the server';
      try {
        await blobs.check();
      } catch {
        return 'the blob store does not answer';
      }
      return null;
    },
    close: async () => {
      // Settles still running (responses just ended) finish before the database closes.
      await reservations.stop();
      // Download counts taken in memory are written before the database closes.
      await downloadCounts.stop();
      requestSlots.stop();
      await redis?.close();
      await store.close();
    },
  };
}

/** Creates the data folder (and its parents), or says in one line why it cannot. */
async function createDataFolder(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOTDIR' || code === 'EEXIST'
        ? 'a file is in the way'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EROFS'
            ? 'read-only file system'
            : (error as Error).message;
    throw new ConfigError(`cannot create the data folder ${dir} (--data, FILEHAVEN_DATA): ${why}`);
  }
}

/**
 * The secret seals every stored API key and signs every direct link: started with another
 * one (a lost `<data>/secret`, a forgotten FILEHAVEN_SECRET), every key would stop working.
 * The database keeps an HMAC fingerprint of the secret it was set up with and refuses a
 * different one, instead of silently breaking every client.
 */
async function checkSecretFingerprint(store: MetadataStore, secrets: ServerSecrets): Promise<void> {
  if (!(await secretMatchesSite(store, secrets))) {
    throw new ConfigError(
      'the server secret differs from the one this data folder was set up with; start with the original secret (--secret, FILEHAVEN_SECRET or <data>/secret): stored API keys and direct links depend on it',
    );
  }
}

/**
 * Whether `secrets` is the secret the site was set up with: the database's fingerprint of
 * it, recorded now when the database has none yet (a new site).
 */
export async function secretMatchesSite(store: MetadataStore, secrets: ServerSecrets): Promise<boolean> {
  const fingerprint = secrets.fingerprint();
  const stored = await store.serverSettings.setIfAbsent(SECRET_FINGERPRINT_SETTING, fingerprint);
  return constantTimeEqual(stored, fingerprint);
}
