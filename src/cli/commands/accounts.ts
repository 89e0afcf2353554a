import { parseBytes } from '../../config/units.js';
import { premiumState, type Account } from '../../domain/types.js';
import { sqlDateTime } from '../../domain/dates.js';
import { money } from '../../domain/money.js';
import { optionalNumber, parseCommandArgs, required, UsageError } from '../args.js';
import { cliActor } from '../audit-trail.js';
import { joinNegativeValues, moneyFlag, noPositionals } from '../flags.js';
import { withServices } from '../with-services.js';

export const ACCOUNTS_USAGE = `filehaven accounts create --login L --password W [--name N] [--email E] [--premium-days D] [--traffic BYTES] [--json]
filehaven accounts list [--json]
filehaven accounts premium --login L [--days D] [--traffic BYTES]
filehaven accounts disable|enable --login L
filehaven accounts set-password --login L --password W
filehaven accounts regenerate-key --login L
filehaven accounts balance --login L (--set AMOUNT | --add AMOUNT)    AMOUNT like 12.50 or -3.00`;

const days = (raw: string) => (/^\d+(\.\d+)?$/.test(raw) ? Number(raw) : null);

// The flags each command takes; anything else is a usage error naming the flag.
const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
const FLAGS = {
  create: { login: str, password: str, name: str, email: str, 'premium-days': str, traffic: str, json: bool },
  list: { json: bool },
  premium: { login: str, days: str, traffic: str },
  disable: { login: str },
  enable: { login: str },
  'set-password': { login: str, password: str },
  'regenerate-key': { login: str },
  balance: { login: str, set: str, add: str },
};

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
  if (!sub || !Object.hasOwn(FLAGS, sub)) throw new UsageError(sub ? `unknown accounts command "${sub}"` : 'accounts needs a command');
  const { values, positionals, settings } = parseCommandArgs(joinNegativeValues(rest, ['set', 'add']), FLAGS[sub as keyof typeof FLAGS]);
  noPositionals(positionals, `accounts ${sub}`);
  switch (sub) {
    case 'create': {
      const input = {
        login: required(values, 'login'),
        password: required(values, 'password'),
        name: values.name as string | undefined,
        email: values.email as string | undefined,
        premiumDays: optionalNumber(values, 'premium-days', days),
        trafficBytes: optionalNumber(values, 'traffic', parseBytes),
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
        console.log(['ID', 'LOGIN', 'PREMIUM', 'PREMIUM END', 'TRAFFIC LEFT', 'FLAGS'].join('\t'));
        for (const a of accounts) {
          const flags = [a.operator ? 'operator' : '', a.disabled ? 'disabled' : ''].filter(Boolean).join(',');
          console.log([a.id, a.login, a.premium, a.premiumEnd ?? '-', a.trafficLeft, flags || '-'].join('\t'));
        }
      });
      return;
    case 'premium': {
      const login = required(values, 'login');
      const addDays = optionalNumber(values, 'days', days) ?? 0;
      const traffic = optionalNumber(values, 'traffic', parseBytes) ?? 0;
      if (addDays === 0 && traffic === 0) throw new UsageError('give --days D and/or --traffic BYTES');
      await withServices(settings, async (services) => {
        const account = await services.operator.actions.extendPremium(cliActor(), login, addDays, traffic);
        const d = describe(account, services.clock());
        console.log(`${d.login}: premium ${d.premium} until ${d.premiumEnd ?? '-'}, traffic left ${d.trafficLeft} bytes`);
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
      const password = required(values, 'password');
      await withServices(settings, async (services) => {
        const account = await services.operator.actions.setPassword(cliActor(), login, password);
        console.log(`password of "${account.login}" changed; the old one no longer works`);
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
      const set = moneyFlag(values, 'set');
      const add = moneyFlag(values, 'add');
      if ((set === undefined) === (add === undefined)) throw new UsageError('give exactly one of --set AMOUNT and --add AMOUNT');
      await withServices(settings, async (services) => {
        const { before, after } = await services.operator.actions.changeBalance(cliActor(), login, set !== undefined ? { set } : { add: add! });
        console.log(`${before.login}: balance ${money(after.balanceCents)} (was ${money(before.balanceCents)})`);
      });
      return;
    }
  }
}
