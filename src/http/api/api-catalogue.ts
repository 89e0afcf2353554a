import { type ApiError, type ErrorCode, errors } from '../../domain/errors.js';

/**
 * The one list of API endpoints: the developers page ({ed_namespace}) renders it, the
 * endpoint table of docs/api.md is generated from it (scripts/readme-endpoints.ts, checked by
 * a test), the API rate limit takes its path words from it, and a test sends a request
 * to every entry to prove the server routes it.
 */

/** Who may call an endpoint (SPEC.md "Authentication"). */
export type Access = 'public' | 'key' | 'premium';

export interface EndpointParam {
  /** Field name as sent. */
  name: string;
  /** Where it travels. */
  in: 'path' | 'query' | 'form' | 'multipart';
  /** Whether the call fails without it. */
  required: boolean;
  /** What it means, in one sentence. */
  notes: string;
}

export interface Endpoint {
  /** Anchor on the developers page. */
  anchor: string;
  /** The documented method (PUT and DELETE may be sent as POST with `_method`). */
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path under {base_url}; `<id>` stands for an id. */
  path: string;
  /** Other paths that answer the same (API.md 2). */
  aliases: string[];
  /** public, API key, or API key of an active premium account. */
  access: Access;
  /** False for our extensions (API.md 7, docs/api.md). */
  inSpec: boolean;
  /** What it does. */
  summary: string;
  /** Parameters besides the Authorization header. */
  params: EndpointParam[];
  /** HTTP status and feed title of a success. */
  success: { status: number; title: string };
  /** Codes the endpoint answers with, besides errorRateLimited and errorInternal. */
  errors: ErrorCode[];
  /** A curl command; `{base}` is replaced by {base_url}, `$KEY` is the caller's key. */
  curl: string;
}

const keyErrors: ErrorCode[] = ['errorPermissionDenied'];

export const ENDPOINTS: readonly Endpoint[] = [
  {
    anchor: 'apikeys',
    method: 'POST',
    path: '/apikeys',
    aliases: [],
    access: 'public',
    inSpec: true,
    summary:
      'The API key of an account, from its login and password. The same key comes back on every call. An account with a second factor (TOTP) or single sign-on gets `errorPermissionDenied` (403) instead: its key is on its profile page.',
    params: [
      { name: 'login', in: 'form', required: true, notes: 'Account login.' },
      { name: 'password', in: 'form', required: true, notes: 'Account password; `pass` is accepted as an alias.' },
      { name: 'create', in: 'form', required: false, notes: '`1` asks for a new key explicitly: errorApiKeyAlreadyCreated when one exists.' },
    ],
    success: { status: 201, title: 'ApiKey' },
    errors: ['errorWrongCredentials', 'errorApiKeyAlreadyCreated'],
    curl: `curl -s -d login=ada -d password='correct horse' {base}/apikeys`,
  },
  {
    anchor: 'upload',
    method: 'POST',
    path: '/files',
    aliases: ['/file'],
    access: 'key',
    inSpec: true,
    summary: 'Uploads one file: the multipart part named `upload`, else the first file part.',
    params: [
      { name: 'upload', in: 'multipart', required: true, notes: 'The file; its filename (UTF-8) becomes the file name.' },
      {
        name: 'expires_in',
        in: 'multipart',
        required: false,
        notes: 'Extension: seconds until the file expires (at least 1; absent: the server default); the answer then carries `Filehaven-Expires`.',
      },
    ],
    success: { status: 201, title: 'File upload result' },
    errors: [...keyErrors, 'errorFileSize', 'errorEmptyFile', 'errorUploadLimit', 'errorFileInBlackList', 'errorWrongParameters', 'errorUploadFaild'],
    curl: `curl -s -H "Authorization: $KEY" -F 'upload=@report 2026.pdf' {base}/files`,
  },
  {
    anchor: 'file-list',
    method: 'GET',
    path: '/files',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Your files, newest first, page by page (`<link rel="next">` carries the cursor).',
    params: [
      { name: 'status', in: 'query', required: false, notes: '`A`, `B` or `A,B` (default).' },
      { name: 'folder', in: 'query', required: false, notes: '`root` or one of your folder ids.' },
      { name: 'limit', in: 'query', required: false, notes: '1 to 500, default 50.' },
      { name: 'cursor', in: 'query', required: false, notes: 'From the previous page’s next link.' },
    ],
    success: { status: 200, title: 'File list' },
    errors: [...keyErrors, 'errorFolderNotFound', 'errorBadRequest'],
    curl: `curl -s -H "Authorization: $KEY" "{base}/files?status=A&limit=50"`,
  },
  {
    anchor: 'file-details',
    method: 'GET',
    path: '/files/<id>',
    aliases: [],
    access: 'premium',
    inSpec: true,
    summary: 'File details: id, title, `ed:status` (A active, B blocked) and the download link.',
    params: [{ name: 'id', in: 'path', required: true, notes: 'File id.' }],
    success: { status: 200, title: 'File Full info' },
    errors: [...keyErrors, 'errorFileNotFound'],
    curl: `curl -s -H "Authorization: $KEY" {base}/files/K7Q2M9X4PA`,
  },
  {
    anchor: 'direct-link',
    method: 'GET',
    path: '/files/<id>;DirectLink',
    aliases: ['/files/<id>%3BDirectLink'],
    access: 'premium',
    inSpec: true,
    summary: 'A signed, expiring direct download link for an active file; the download itself carries the key too.',
    params: [{ name: 'id', in: 'path', required: true, notes: 'File id.' }],
    success: { status: 200, title: 'File info' },
    errors: [...keyErrors, 'errorFileNotFound', 'errorFileInNoDownloadedStatus'],
    curl: `curl -s -H "Authorization: $KEY" "{base}/files/K7Q2M9X4PA;DirectLink"`,
  },
  {
    anchor: 'file-expiry',
    method: 'PUT',
    path: '/files/<id>;expiry',
    aliases: ['/files/<id>%3Bexpiry'],
    access: 'key',
    inSpec: false,
    summary: 'Changes when one of your files expires; from its expiry a file behaves as deleted.',
    params: [
      { name: 'id', in: 'path', required: true, notes: 'File id.' },
      { name: 'expires_in', in: 'form', required: true, notes: 'Seconds from now; `0` = never (refused when the server caps file expiry).' },
    ],
    success: { status: 200, title: 'File expiry' },
    errors: [...keyErrors, 'errorFileNotFound', 'errorWrongParameters'],
    curl: `curl -s -X PUT -H "Authorization: $KEY" -d expires_in=604800 "{base}/files/K7Q2M9X4PA;expiry"`,
  },
  {
    anchor: 'file-delete',
    method: 'DELETE',
    path: '/files/<id>',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Deletes one of your files (the delete link does the same).',
    params: [{ name: 'id', in: 'path', required: true, notes: 'File id.' }],
    success: { status: 200, title: 'File delete' },
    errors: [...keyErrors, 'errorFileNotFound'],
    curl: `curl -s -X DELETE -H "Authorization: $KEY" {base}/files/K7Q2M9X4PA`,
  },
  {
    anchor: 'copy',
    method: 'POST',
    path: '/files/copy/<id>',
    aliases: ['/files/copy:<id>'],
    access: 'key',
    inSpec: true,
    summary: 'Copies any active file into your account: a new id and delete link, the same bytes.',
    params: [{ name: 'id', in: 'path', required: true, notes: 'Id of the file to copy.' }],
    success: { status: 201, title: 'File copy' },
    errors: [...keyErrors, 'errorFileNotFound'],
    curl: `curl -s -X POST -H "Authorization: $KEY" {base}/files/copy/K7Q2M9X4PA`,
  },
  {
    anchor: 'folder-list',
    method: 'GET',
    path: '/folders',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Your folders with their file counts (`ed:files`) and sizes, page by page.',
    params: [
      { name: 'parent', in: 'query', required: false, notes: '`root` or one of your folder ids.' },
      { name: 'limit', in: 'query', required: false, notes: '1 to 500, default 50.' },
      { name: 'cursor', in: 'query', required: false, notes: 'From the previous page’s next link.' },
    ],
    success: { status: 200, title: 'Folder list' },
    errors: [...keyErrors, 'errorFolderNotFound', 'errorBadRequest'],
    curl: `curl -s -H "Authorization: $KEY" "{base}/folders?parent=root"`,
  },
  {
    anchor: 'folder-create',
    method: 'POST',
    path: '/folders',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Creates a folder, at the top or inside one of your folders.',
    params: [
      { name: 'name', in: 'form', required: true, notes: 'Folder name.' },
      { name: 'parent', in: 'form', required: false, notes: 'Id of one of your folders.' },
    ],
    success: { status: 201, title: 'Folder' },
    errors: [...keyErrors, 'errorFolderNotFound'],
    curl: `curl -s -H "Authorization: $KEY" -d name=Reports {base}/folders`,
  },
  {
    anchor: 'folder-show',
    method: 'GET',
    path: '/folders/<id>',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'One of your folders: its link and size, sub-folders and active files, page by page.',
    params: [
      { name: 'id', in: 'path', required: true, notes: 'Folder id.' },
      { name: 'limit', in: 'query', required: false, notes: 'Files per page, 1 to 500, default 50; `ed:files` counts them all.' },
      { name: 'cursor', in: 'query', required: false, notes: 'From the previous page’s next link; sub-folders come with the first page only.' },
    ],
    success: { status: 200, title: 'Folder' },
    errors: [...keyErrors, 'errorFolderNotFound', 'errorBadRequest'],
    curl: `curl -s -H "Authorization: $KEY" {base}/folders/CWRCTXKTAN`,
  },
  {
    anchor: 'folder-delete',
    method: 'DELETE',
    path: '/folders/<id>',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Removes one of your folders when it is empty.',
    params: [{ name: 'id', in: 'path', required: true, notes: 'Folder id.' }],
    success: { status: 200, title: 'Folder delete' },
    errors: [...keyErrors, 'errorFolderNotFound', 'errorFolderNotEmpty'],
    curl: `curl -s -X DELETE -H "Authorization: $KEY" {base}/folders/CWRCTXKTAN`,
  },
  {
    anchor: 'move',
    method: 'PUT',
    path: '/folders/<id>;files',
    aliases: ['/folders/<id>%3Bfiles'],
    access: 'key',
    inSpec: true,
    summary: 'Moves your files into one of your folders, all or nothing; `ed:updated` counts them.',
    params: [
      { name: 'id', in: 'path', required: true, notes: 'Folder id.' },
      { name: 'files[0], files[1], …', in: 'form', required: true, notes: 'Ids of the files to move.' },
      { name: '_method', in: 'form', required: false, notes: '`PUT`, when sent as POST.' },
    ],
    success: { status: 200, title: 'Add files to folder' },
    errors: [...keyErrors, 'errorFolderNotFound', 'errorFolderFilesAddFailed'],
    curl: `curl -s -H "Authorization: $KEY" -d _method=PUT -d 'files[0]=K7Q2M9X4PA' -d 'files[1]=QKK3OHIV8I' "{base}/folders/CWRCTXKTAN;files"`,
  },
  {
    anchor: 'requests-create',
    method: 'POST',
    path: '/requests',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Opens an upload request: a link where others upload into one of your folders, with limits and an optional password.',
    params: [
      { name: 'folder', in: 'form', required: false, notes: 'Id of one of your folders; absent: the top level.' },
      { name: 'title', in: 'form', required: false, notes: 'Shown on the request’s page (at most 255 characters).' },
      { name: 'message', in: 'form', required: false, notes: 'Shown under the title (at most 4000 characters).' },
      { name: 'expires_in', in: 'form', required: false, notes: 'Seconds until it stops taking uploads; absent: never (or the server’s maximum).' },
      { name: 'password', in: 'form', required: false, notes: 'Uploaders must give it (header Filehaven-Share-Password or the page’s form).' },
      { name: 'max_files', in: 'form', required: false, notes: 'Files it takes at most; absent: unlimited.' },
      { name: 'max_bytes', in: 'form', required: false, notes: 'Bytes of all its files together at most; absent: unlimited.' },
      { name: 'max_file_size', in: 'form', required: false, notes: 'Bytes of each file at most; absent: the server’s limit.' },
    ],
    success: { status: 201, title: 'Upload request' },
    errors: [...keyErrors, 'errorFolderNotFound', 'errorWrongParameters'],
    curl: `curl -s -H "Authorization: $KEY" -d folder=CWRCTXKTAN -d title=Photos -d max_files=20 {base}/requests`,
  },
  {
    anchor: 'requests-list',
    method: 'GET',
    path: '/requests',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Your open upload requests with their counts, newest first, page by page.',
    params: [
      { name: 'limit', in: 'query', required: false, notes: 'Requests per page, 1 to 500 (default 50).' },
      { name: 'cursor', in: 'query', required: false, notes: 'From the previous page’s next link.' },
    ],
    success: { status: 200, title: 'Upload request list' },
    errors: [...keyErrors, 'errorBadRequest'],
    curl: `curl -s -H "Authorization: $KEY" {base}/requests`,
  },
  {
    anchor: 'requests-show',
    method: 'GET',
    path: '/requests/<id>',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'One of your upload requests: its link, limits and what came in so far.',
    params: [],
    success: { status: 200, title: 'Upload request' },
    errors: [...keyErrors, 'errorShareNotFound'],
    curl: `curl -s -H "Authorization: $KEY" {base}/requests/Xq3Lr8Tz2Wm9Kc4Vb7Na1D`,
  },
  {
    anchor: 'requests-change',
    method: 'PUT',
    path: '/requests/<id>',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Changes an upload request: expiry (0 = never), password (empty = none), limits (0 = unlimited), title, message.',
    params: [
      { name: 'expires_in', in: 'form', required: false, notes: 'Seconds from now; 0: never.' },
      { name: 'password', in: 'form', required: false, notes: 'The new password; empty: none.' },
      { name: 'max_files', in: 'form', required: false, notes: '0: unlimited.' },
      { name: 'max_bytes', in: 'form', required: false, notes: '0: unlimited.' },
      { name: 'max_file_size', in: 'form', required: false, notes: '0: the server’s limit.' },
      { name: 'title', in: 'form', required: false, notes: 'The new title.' },
      { name: 'message', in: 'form', required: false, notes: 'The new message.' },
    ],
    success: { status: 200, title: 'Upload request' },
    errors: [...keyErrors, 'errorShareNotFound', 'errorWrongParameters'],
    curl: `curl -s -H "Authorization: $KEY" -d _method=PUT -d max_files=0 {base}/requests/Xq3Lr8Tz2Wm9Kc4Vb7Na1D`,
  },
  {
    anchor: 'requests-close',
    method: 'DELETE',
    path: '/requests/<id>',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Closes an upload request: its link takes nothing more; the files stay yours.',
    params: [],
    success: { status: 200, title: 'Upload request' },
    errors: [...keyErrors, 'errorShareNotFound'],
    curl: `curl -s -X DELETE -H "Authorization: $KEY" {base}/requests/Xq3Lr8Tz2Wm9Kc4Vb7Na1D`,
  },
  {
    anchor: 'account',
    method: 'GET',
    path: '/account',
    aliases: [],
    access: 'key',
    inSpec: true,
    summary: 'Account and premium details: name, e-mail, balance, premium period and traffic left.',
    params: [],
    success: { status: 200, title: 'Account Info' },
    errors: [...keyErrors, 'errorAccountNotFound'],
    curl: `curl -s -H "Authorization: $KEY" {base}/account`,
  },
  // Shares (issue 25, docs/api.md "Shares").
  {
    anchor: 'share-create',
    method: 'POST',
    path: '/shares',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Shares one of your active files or folders as a link: optional expiry, password, download limit, fast.',
    params: [
      { name: 'file', in: 'form', required: false, notes: 'The file to share; give exactly one of `file` and `folder`.' },
      { name: 'folder', in: 'form', required: false, notes: 'The folder to share (with everything below it).' },
      { name: 'expires_in', in: 'form', required: false, notes: 'Seconds until the link expires, at least 1; absent: never (unless the server caps it).' },
      { name: 'password', in: 'form', required: false, notes: 'A password visitors must give (in the body only); some servers require one.' },
      { name: 'max_downloads', in: 'form', required: false, notes: 'Downloads allowed, a positive whole number; absent: unlimited.' },
      { name: 'fast', in: 'form', required: false, notes: '`1`: served uncapped from your premium traffic while you have premium.' },
    ],
    success: { status: 201, title: 'Share' },
    errors: [...keyErrors, 'errorFileNotFound', 'errorFolderNotFound', 'errorWrongParameters'],
    curl: `curl -s -H "Authorization: $KEY" -d file=K7Q2M9X4PA -d expires_in=604800 -d max_downloads=5 {base}/shares`,
  },
  {
    anchor: 'share-list',
    method: 'GET',
    path: '/shares',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Your shares, newest first, page by page (`limit`, `cursor` as for GET /files).',
    params: [
      { name: 'limit', in: 'query', required: false, notes: 'Page size, 1 to 500 (default 50).' },
      { name: 'cursor', in: 'query', required: false, notes: 'From the previous page’s next link.' },
    ],
    success: { status: 200, title: 'Share list' },
    errors: [...keyErrors, 'errorBadRequest'],
    curl: `curl -s -H "Authorization: $KEY" {base}/shares`,
  },
  {
    anchor: 'share-show',
    method: 'GET',
    path: '/shares/<id>',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'One of your shares, with its download count.',
    params: [{ name: 'id', in: 'path', required: true, notes: 'Share id.' }],
    success: { status: 200, title: 'Share' },
    errors: [...keyErrors, 'errorShareNotFound'],
    curl: `curl -s -H "Authorization: $KEY" {base}/shares/Xq3k9ZpL2mN8vB4cR7tY1w`,
  },
  {
    anchor: 'share-change',
    method: 'PUT',
    path: '/shares/<id>',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Changes a share: `expires_in` (`0` = never), `password` (empty = none), `max_downloads` (`0` = unlimited), `fast`; the count stays.',
    params: [
      { name: 'id', in: 'path', required: true, notes: 'Share id.' },
      { name: 'expires_in', in: 'form', required: false, notes: 'Seconds from now; `0` = never.' },
      { name: 'password', in: 'form', required: false, notes: 'The new password; empty removes it.' },
      { name: 'max_downloads', in: 'form', required: false, notes: 'The new limit; `0` = unlimited.' },
      { name: 'fast', in: 'form', required: false, notes: '`1` or `0`.' },
    ],
    success: { status: 200, title: 'Share' },
    errors: [...keyErrors, 'errorShareNotFound', 'errorWrongParameters'],
    curl: `curl -s -X PUT -H "Authorization: $KEY" -d max_downloads=0 {base}/shares/Xq3k9ZpL2mN8vB4cR7tY1w`,
  },
  {
    anchor: 'share-revoke',
    method: 'DELETE',
    path: '/shares/<id>',
    aliases: [],
    access: 'key',
    inSpec: false,
    summary: 'Revokes a share: its link answers errorShareNotFound from then on.',
    params: [{ name: 'id', in: 'path', required: true, notes: 'Share id.' }],
    success: { status: 200, title: 'Share' },
    errors: [...keyErrors, 'errorShareNotFound'],
    curl: `curl -s -X DELETE -H "Authorization: $KEY" {base}/shares/Xq3k9ZpL2mN8vB4cR7tY1w`,
  },
];

/** The first path words of the API, aliases included (API.md 1: they never collide with web paths). */
export const API_PATH_WORDS: ReadonlySet<string> = new Set([
  ...ENDPOINTS.flatMap((endpoint) => [endpoint.path, ...endpoint.aliases]).map((path) => path.split('/')[1]!),
  // Resumable uploads (tus 1.0, http/tus/): API requests too (the rate
  // limit, Atom errors), outside the catalogue because they answer tus rather than feeds.
  'uploads',
]);

/** A curl example with the real {base_url}. */
export const curlFor = (endpoint: Endpoint, baseUrl: string) => endpoint.curl.replaceAll('{base}', baseUrl);

export const ACCESS_LABELS: Record<Access, string> = { public: 'none', key: 'API key', premium: 'API key, premium' };

/** A documented error: the real ApiError the server builds, and when it happens. */
export interface ErrorCase {
  error: ApiError;
  when: string;
}

/**
 * One example of every error the server sends, built by the same constructors the
 * server uses (src/domain/errors.ts), so codes, statuses and messages cannot drift.
 */
export function errorCases(limits: { maxFileSize: number }): ErrorCase[] {
  return [
    { error: errors.wrongCredentials(), when: 'POST /apikeys with a wrong login or password' },
    { error: errors.signInThrottled(60), when: 'too many failed attempts per address or login' },
    { error: errors.wrongApiKey(), when: 'a missing or unknown API key' },
    { error: errors.notPremium(), when: 'a premium operation without an active premium period' },
    { error: errors.permissionDenied('The file belongs to another account'), when: 'not the owner, a blocked file, no traffic left (the message says why)' },
    { error: errors.accountNotFound(), when: 'the key’s account is gone' },
    { error: errors.fileNotFound(), when: 'an unknown or deleted file' },
    { error: errors.folderNotFound(), when: 'an unknown or deleted folder' },
    { error: errors.fileNotDownloadable(), when: 'a direct link for a blocked or deleted file' },
    { error: errors.emptyFile(), when: 'an upload of zero bytes' },
    { error: errors.fileSize(limits.maxFileSize), when: 'an upload over the size limit (nothing is kept)' },
    { error: errors.uploadLimit(3600), when: 'the account’s upload volume per 24 h is used up' },
    { error: errors.requestFull(), when: 'an upload into a request whose max_files or max_bytes is taken' },
    { error: errors.requestNotFound(), when: 'an unknown, closed or another account’s upload request' },
    { error: errors.requestExpired(), when: 'an upload into a request past its expiry' },
    { error: errors.sharePassword(), when: 'a protected share or request without its password, or with a wrong one' },
    { error: errors.sharePasswordThrottled(60), when: 'too many wrong passwords per address or per link' },
    { error: errors.wrongParameters('max_files must be a whole number'), when: 'a malformed or out-of-range field of a share or request' },
    { error: errors.blacklisted(), when: 'an upload whose digest or name is black-listed' },
    { error: errors.folderFilesAddFailed('File QKK3OHIV8I belongs to another account'), when: 'a listed file is unknown, deleted or not yours' },
    { error: errors.apiKeyAlreadyCreated(), when: 'POST /apikeys with create=1 when a key exists' },
    { error: errors.uploadMalformed('the body ended early'), when: 'a malformed, truncated or interrupted upload' },
    { error: errors.uploadStorage(), when: 'the server could not store the upload' },
    { error: errors.notFound(), when: 'an unknown API path' },
    { error: errors.methodNotAllowed(['GET', 'HEAD', 'DELETE']), when: 'a known path with another method' },
    { error: errors.folderNotEmpty(), when: 'DELETE of a folder that still holds files or folders' },
    { error: errors.badRequest('limit must be a whole number from 1 to 500'), when: 'a malformed parameter' },
    { error: errors.rateLimited(30), when: 'too many API requests per key or per address' },
    { error: errors.internal(), when: 'an unexpected failure' },
    { error: errors.serverBusy(5), when: 'every database connection stayed in use while the request waited (PostgreSQL under a burst)' },
    { error: errors.shareNotFound(), when: 'an unknown or revoked share, another account’s, or one whose file or folder is gone or blocked' },
    { error: errors.shareExpired(), when: 'a share past its expiry' },
    { error: errors.shareDownloadLimit(), when: 'a download from byte 0 of a share that has had max_downloads downloads' },
    { error: errors.sharePassword(), when: 'a protected share without its password (Filehaven-Share-Password or the page’s cookie), or a wrong one' },
    { error: errors.sharePasswordThrottled(60), when: 'too many wrong share passwords from one address or for one share' },
    {
      error: errors.wrongParameters('max_downloads must be a whole number from 1 to 1000000000'),
      when: 'a share field that is missing, malformed or out of range',
    },
  ];
}

/** The endpoint table of docs/api.md (between the `endpoints` markers), generated from ENDPOINTS. */
export function endpointsMarkdown(): string {
  const lines = ['| method | path | auth | success | what it does |', '|---|---|---|---|---|'];
  for (const endpoint of ENDPOINTS) {
    const paths = [endpoint.path, ...endpoint.aliases.filter((alias) => !alias.includes('%3B'))].map((path) => `\`${path}\``).join(', ');
    const spec = endpoint.inSpec ? '' : ' (extension)';
    lines.push(
      `| ${endpoint.method} | ${paths} | ${ACCESS_LABELS[endpoint.access]} | ${endpoint.success.status} \`${endpoint.success.title}\` | ${endpoint.summary}${spec} |`,
    );
  }
  return lines.join('\n');
}
