import { sqlDateTime } from '../../domain/dates.js';
import { money } from '../../domain/money.js';
import { type Account, premiumState } from '../../domain/types.js';
import { parseCommandArgs, required, UsageError } from '../args.js';
import { cliActor } from '../audit-trail.js';
import { columns, humanBytes } from '../client/display.js';
import { daysFlag, moneyFlag, noPositionals, passwordFlag, RANGES, sizeFlag } from '../flags.js';
import { optionsFor, subcommandsOf } from '../help.js';
import { withServices } from '../with-services.js';

const SUBCOMMANDS = subcommandsOf('accounts')!;

function describe(account: Account, now: number) {
  return {
    id: account.id,
    login: account.login,
    name: account.name,
    email: account.email,
    operator: account.isOperator,
    disabled: account.disabled,
    balance: money(account.balanceCents),
    premium: premiumState(account, now),
    premiumStart: sqlDateTime(account.premiumStart) || null,
    premiumEnd: sqlDateTime(account.premiumEnd) || null,
    trafficLeft: account.trafficLeft,
  };
}

/** `filehaven accounts ...` */
export async function accountsCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (!sub || !SUBCOMMANDS.includes(sub))
    throw new UsageError(sub ? `unknown accounts command "${sub}"` : `accounts needs a command: ${SUBCOMMANDS.join(', ')}`);
  const { values, positionals, settings } = parseCommandArgs(rest, optionsFor('accounts', sub));
  noPositionals(positionals, `accounts ${sub}`);
  switch (sub) {
    case 'create': {
      const login = required(values, 'login');
      const premiumDays = daysFlag(values, 'premium-days', RANGES.premiumDays);
      const trafficBytes = sizeFlag(values, 'traffic', RANGES.traffic);
      // Read last: every mistake in the flags is reported before stdin is waited on.
      const input = {
        login,
        password: await passwordFlag(values),
        name: values.name as string | undefined,
        email: values.email as string | undefined,
        premiumDays,
        trafficBytes,
      };
      await withServices(settings, async (services) => {
        const account = await services.operator.actions.createAccount(cliActor(), input);
        if (values.json) console.log(JSON.stringify(describe(account, services.clock())));
        else console.log(`created account ${account.id} "${account.login}"`);
      });
      return;
    }
    case 'list':
      await withServices(settings, async (services) => {
        const now = services.clock();
        const accounts = (await services.accounts.list()).map((a) => describe(a, now));
        if (values.json) return console.log(JSON.stringify(accounts));
        if (accounts.length === 0) return console.log('no accounts');
        const rows = accounts.map((a) => {
          const flags = [a.operator ? 'operator' : '', a.disabled ? 'disabled' : ''].filter(Boolean).join(',');
          return [String(a.id), a.login, a.premium, a.premiumEnd ?? '-', humanBytes(a.trafficLeft), flags || '-'];
        });
        console.log(columns([['ID', 'LOGIN', 'PREMIUM', 'PREMIUM END (UTC)', 'TRAFFIC LEFT', 'FLAGS'], ...rows]));
      });
      return;
    case 'premium': {
      const login = required(values, 'login');
      const days = daysFlag(values, 'days', RANGES.premiumChange);
      const traffic = sizeFlag(values, 'traffic', RANGES.traffic) ?? 0;
      const end = values.end === true;
      if (end && days !== undefined) throw new UsageError('give --days D or --end, not both');
      if (!end && !days && traffic === 0) throw new UsageError('give --days D, --end and/or --traffic SIZE');
      await withServices(settings, async (services) => {
        let account: Account;
        if (end) {
          const ended = await services.operator.actions.endPremium(cliActor(), login, traffic);
          if (!ended.ended && traffic === 0) {
            const d = describe(ended.account, services.clock());
            return console.log(values.json ? JSON.stringify(d) : `${d.login}: premium was not active (${d.premium}); nothing changed`);
          }
          account = ended.account;
        } else {
          account = await services.operator.actions.extendPremium(cliActor(), login, days ?? 0, traffic);
        }
        const d = describe(account, services.clock());
        if (values.json) return console.log(JSON.stringify(d));
        const period = d.premium === 'Active' ? ` until ${d.premiumEnd} UTC` : d.premium === 'Expired' ? ` (ended ${d.premiumEnd} UTC)` : '';
        console.log(`${d.login}: premium ${d.premium}${period}, traffic left ${humanBytes(d.trafficLeft)}`);
      });
      return;
    }
    case 'disable':
    case 'enable': {
      const login = required(values, 'login');
      const disabled = sub === 'disable';
      await withServices(settings, async (services) => {
        const { account, changed } = await services.operator.actions.setDisabled(cliActor(), login, disabled);
        if (!changed) return console.log(`account "${account.login}" was already ${sub}d`);
        console.log(disabled ? `disabled account "${account.login}": its API key and sign-in stop working now` : `enabled account "${account.login}"`);
      });
      return;
    }
    case 'set-password': {
      const login = required(values, 'login');
      const password = await passwordFlag(values);
      await withServices(settings, async (services) => {
        const account = await services.operator.actions.setPassword(cliActor(), login, password);
        console.log(`password of "${account.login}" changed; the old one no longer works`);
      });
      return;
    }
    case 'sign-out': {
      const login = required(values, 'login');
      await withServices(settings, async (services) => {
        const { account, ended } = await services.operator.actions.signOutEverywhere(cliActor(), login);
        console.log(`ended ${ended} web session${ended === 1 ? '' : 's'} of "${account.login}"; its API key still works`);
      });
      return;
    }
    case 'reset-second-factor': {
      const login = required(values, 'login');
      await withServices(settings, async (services) => {
        const { account, removed } = await services.secondFactors.operatorReset(cliActor(), login);
        if (!removed) return console.log(`"${account.login}" has no two-step verification; nothing changed`);
        console.log(`removed two-step verification (TOTP and recovery codes) of "${account.login}": its password alone signs in until it is set up again`);
      });
      return;
    }
    case 'regenerate-key': {
      const login = required(values, 'login');
      await withServices(settings, async (services) => {
        const { key } = await services.operator.actions.regenerateKey(cliActor(), login);
        // The key alone, so scripts can take it with $(...); the old key no longer works.
        console.log(key);
      });
      return;
    }
    case 'balance': {
      const login = required(values, 'login');
      const set = moneyFlag(values, 'set', RANGES.balance);
      const add = moneyFlag(values, 'add', RANGES.balanceChange);
      if ((set === undefined) === (add === undefined)) throw new UsageError('give exactly one of --set AMOUNT and --add AMOUNT');
      await withServices(settings, async (services) => {
        const { before, after } = await services.operator.actions.changeBalance(cliActor(), login, set !== undefined ? { set } : { add: add! });
        console.log(`${before.login}: balance ${money(after.balanceCents)} (was ${money(before.balanceCents)})`);
      });
      return;
    }
  }
}
