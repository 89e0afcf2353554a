import type { FuzzTarget } from './targets.js';

/**
 * Real things for the fuzzer to aim at, made the way clients make them (operator CLI for
 * accounts, the API for keys, files, folders and direct links, the sign-in form for a
 * browser session), so random requests reach the success paths too, not only the 404s.
 */
export interface Fixtures {
  /** A premium account (file details, direct links) and its key. */
  premium: { login: string; password: string; key: string };
  /** A free account's key. */
  freeKey: string;
  /** Files of the premium account. */
  fileIds: string[];
  /** A file of the free account. */
  otherFileIds: string[];
  /** Folders of the premium account. */
  folderIds: string[];
  /** Paths of download links, `/<id>/<name>`. */
  downloadPaths: string[];
  /** Paths of delete links, `/<id>/delete/<secret>`. */
  deletePaths: string[];
  /** Paths of premium direct links, `/direct/<id>/<token>/<name>`. */
  directPaths: string[];
  /** A signed-in browser (a third account): `fh_session=…` and its forms' CSRF token. */
  session: { cookie: string; csrf: string };
  /** A signed-out browser's sign-in form: `fh_presession=…` and its CSRF token. */
  presession: { cookie: string; csrf: string };
}

const PASSWORD = 'fuzz password 0123';

async function createAccount(target: FuzzTarget, login: string, premium: boolean): Promise<void> {
  const result = await target.cli([
    'accounts',
    'create',
    '--login',
    login,
    '--password',
    PASSWORD,
    ...(premium ? ['--premium-days', '30', '--traffic', '10GiB'] : []),
  ]);
  if (result.code !== 0) throw new Error(`accounts create ${login} failed: ${result.stderr}`);
}

async function expectText(response: Response, status: number, what: string): Promise<string> {
  const body = await response.text();
  if (response.status !== status) throw new Error(`${what}: expected ${status}, got ${response.status}: ${body.slice(0, 500)}`);
  return body;
}

function pick(pattern: RegExp, text: string, what: string): string {
  const match = pattern.exec(text);
  if (!match?.[1]) throw new Error(`${what} not found in: ${text.slice(0, 500)}`);
  return match[1];
}

/** The `name=value` of a Set-Cookie header for `name`. */
function cookieOf(response: Response, name: string): string {
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith(`${name}=`));
  if (!cookie) throw new Error(`no ${name} cookie set`);
  return cookie.split(';')[0]!;
}

export async function prepareFixtures(target: FuzzTarget): Promise<Fixtures> {
  const url = (path: string) => `${target.url}${path}`;
  const logins = { premium: 'fz-premium', free: 'fz-free', web: 'fz-web' };
  await Promise.all([createAccount(target, logins.premium, true), createAccount(target, logins.free, false), createAccount(target, logins.web, false)]);

  const keyOf = async (login: string) =>
    pick(
      /<content type="text">([^<]+)<\/content>/,
      await expectText(await fetch(url('/apikeys'), { method: 'POST', body: new URLSearchParams({ login, password: PASSWORD }) }), 201, 'POST /apikeys'),
      'api key',
    );
  const premiumKey = await keyOf(logins.premium);
  const freeKey = await keyOf(logins.free);

  const upload = async (key: string, name: string, content: string | Uint8Array<ArrayBuffer>) => {
    const form = new FormData();
    form.append('upload', new Blob([content]), name);
    const body = await expectText(await fetch(url('/files'), { method: 'POST', headers: { Authorization: key }, body: form }), 201, `upload ${name}`);
    const id = pick(/<entry>\s*<id>([^<]+)<\/id>/, body, 'file id');
    const path = (title: string) => new URL(pick(new RegExp(`title="${title}" href="([^"]+)"`), body, title)).pathname;
    return { id, download: path('download_link'), delete: path('delete_link') };
  };
  const png: Uint8Array<ArrayBuffer> = Uint8Array.from(Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'));
  const files = [
    await upload(premiumKey, 'notes.txt', 'hello from the fuzzer\n'),
    await upload(premiumKey, 'picture.png', png),
    await upload(premiumKey, 'report 2026 ü.pdf', '%PDF-1.4 not really\n'),
    await upload(premiumKey, 'data.bin', new Uint8Array(3000).fill(7)),
  ];
  const other = await upload(freeKey, 'other.txt', 'a file of another account\n');

  const folderIds: string[] = [];
  for (const name of ['Fuzz A', 'Fuzz B']) {
    const body = await expectText(
      await fetch(url('/folders'), { method: 'POST', headers: { Authorization: premiumKey }, body: new URLSearchParams({ name }) }),
      201,
      'POST /folders',
    );
    folderIds.push(pick(/<entry>\s*<id>([^<]+)<\/id>/, body, 'folder id'));
  }
  await expectText(
    await fetch(url(`/folders/${folderIds[0]};files`), {
      method: 'PUT',
      headers: { Authorization: premiumKey },
      body: new URLSearchParams({ 'files[0]': files[3]!.id }),
    }),
    200,
    'move into a folder',
  );

  const directPaths: string[] = [];
  for (const file of files.slice(0, 2)) {
    const body = await expectText(await fetch(url(`/files/${file.id};DirectLink`), { headers: { Authorization: premiumKey } }), 200, 'direct link');
    directPaths.push(new URL(pick(/href="([^"]+\/direct\/[^"]+)"/, body, 'direct link')).pathname);
  }

  // A browser session: the sign-in form's pre-session and CSRF token, then the sign-in.
  const signInForm = async () => {
    const response = await fetch(url('/signin'));
    const body = await expectText(response, 200, 'GET /signin');
    return { cookie: cookieOf(response, 'fh_presession'), csrf: pick(/name="csrf" value="([^"]+)"/, body, 'sign-in csrf') };
  };
  const pre = await signInForm();
  const signIn = await fetch(url('/signin'), {
    method: 'POST',
    headers: { Cookie: pre.cookie },
    body: new URLSearchParams({ csrf: pre.csrf, login: logins.web, password: PASSWORD }),
    redirect: 'manual',
  });
  await expectText(signIn, 303, 'POST /signin');
  const sessionCookie = cookieOf(signIn, 'fh_session');
  const myFiles = await expectText(await fetch(url('/my/files'), { headers: { Cookie: sessionCookie } }), 200, 'GET /my/files');
  const session = { cookie: sessionCookie, csrf: pick(/name="csrf" value="([^"]+)"/, myFiles, 'session csrf') };

  return {
    premium: { login: logins.premium, password: PASSWORD, key: premiumKey },
    freeKey,
    fileIds: files.map((file) => file.id),
    otherFileIds: [other.id],
    folderIds,
    downloadPaths: [...files, other].map((file) => file.download),
    deletePaths: [...files, other].map((file) => file.delete),
    directPaths,
    session,
    presession: await signInForm(),
  };
}
