import { noPositionals } from '../flags.js';
import { optionsFor } from '../help.js';
import { fields, humanBytes, shown } from './display.js';
import { runUserCommand } from './user-command.js';

/** `filehaven account`: GET /account. */
export async function accountCommand(args: string[]): Promise<void> {
  await runUserCommand('account', args, optionsFor('account'), async (command) => {
    noPositionals(command.positionals, 'account');
    const client = await command.client();
    const account = await client.account();
    const premium = account.premium === 'Active' && account.premiumEnd ? `Active until ${account.premiumEnd} UTC` : account.premium;
    return {
      human: fields([
        ['server', client.server],
        ['account', account.id],
        ['name', shown(account.name) || '-'],
        ['email', shown(account.email) || '-'],
        ['balance', account.balance],
        ['premium', premium],
        ['traffic left', `${account.premiumTrafficLeft} bytes (${humanBytes(account.premiumTrafficLeft)})`],
      ]),
      json: { server: client.server, ...account },
    };
  });
}
