import { FilehavenApiError, FilehavenClient } from '../../client/index.js';
import { UsageError } from '../args.js';
import { noPositionals, passwordFlag } from '../flags.js';
import { optionsFor } from '../help.js';
import { clientConfigPath, removeStoredLogin, writeStoredLogin } from './client-config.js';
import { Prompt } from './prompt.js';
import { NotSignedInError, runUserCommand } from './user-command.js';

/**
 * `filehaven login`: gets the account's key with POST /apikeys (or checks a given one with
 * GET /account) and stores server and key in the config file (mode 0600). The key is
 * never printed.
 */
export async function loginCommand(args: string[]): Promise<void> {
  await runUserCommand('login', args, optionsFor('login'), async (command) => {
    noPositionals(command.positionals, 'login');
    const server = (command.values.server as string | undefined) ?? (process.env.FILEHAVEN_SERVER || undefined);
    if (!server) throw new UsageError('--server URL is required (or FILEHAVEN_SERVER)');
    let client: FilehavenClient;
    try {
      client = new FilehavenClient({ server, signal: command.signal });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    // Only a key given here: FILEHAVEN_KEY may belong to another server, and would be sent to
    // this one unasked. `--key -` reads it from stdin, out of the process list and history.
    const flag = command.values.key as string | undefined;
    let login = command.values.login as string | undefined;
    const passwordStdin = command.values['password-stdin'] === true;
    if (passwordStdin && flag !== undefined) throw new UsageError('give --key or --password-stdin, not both');
    if (passwordStdin && !login) throw new UsageError('--password-stdin needs --login L (standard input holds only the password)');
    const given = flag === '-' ? await readStdin() : flag;
    let key: string;
    if (given !== undefined) {
      key = given.trim();
    } else if (passwordStdin) {
      const password = await passwordFlag(command.values);
      key = await keyByPassword(client, login!, password, command.signal);
    } else {
      const prompt = new Prompt();
      try {
        login ??= (await prompt.ask('login: ')).trim();
        if (!login) throw new UsageError('no login given');
        const password = await prompt.askHidden('password: ');
        key = await keyByPassword(client, login, password, command.signal);
      } finally {
        prompt.close();
      }
    }
    // A key is stored only once the server has taken it.
    const account = await new FilehavenClient({ server: client.server, key, signal: command.signal }).account();
    const file = clientConfigPath();
    await writeStoredLogin({ server: client.server, key, ...(login ? { login } : {}) }, file);
    const who = login ? `${login} (account ${account.id})` : `account ${account.id}`;
    return {
      human: `signed in to ${client.server} as ${who}; the key is stored in ${file}`,
      json: { server: client.server, login: login ?? null, account: account.id, config: file },
    };
  });
}

/** `filehaven logout`: forgets the stored key (the key itself stays valid on the server). */
export async function logoutCommand(args: string[]): Promise<void> {
  await runUserCommand('logout', args, optionsFor('logout'), async (command) => {
    noPositionals(command.positionals, 'logout');
    const file = clientConfigPath();
    const removed = await removeStoredLogin(file);
    return {
      human: removed ? `signed out: removed ${file} (the key still works until it is regenerated on the profile page)` : `not signed in (no ${file})`,
      json: { removed, config: file },
    };
  });
}

/**
 * The key for a login and password. An account with a second factor or single sign-on gets
 * no key for a password alone (errorPermissionDenied, 403; docs/sign-in.md): the way on is
 * the key from the profile page, given with `--key -`.
 */
async function keyByPassword(client: FilehavenClient, login: string, password: string, signal: AbortSignal): Promise<string> {
  try {
    return await client.createApiKey(login, password, { signal });
  } catch (error) {
    if (!(error instanceof FilehavenApiError && error.code === 'errorPermissionDenied' && error.status === 403)) throw error;
    throw new NotSignedInError(`${error.message}. Copy the key from your profile page, then run: filehaven login --server ${client.server} --key -`);
  }
}

/** Everything on stdin, for `--key -`. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) throw new UsageError('--key -: no key on stdin');
  return text;
}
