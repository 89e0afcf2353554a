import { parseBytes } from '../../config/units.js';
import { premiumState, type Account } from '../../domain/types.js';
import { sqlDateTime } from '../../http/api/account-routes.js';
import { optionalNumber, parseCommandArgs, required, UsageError } from '../args.js';
import { withServices } from '../with-services.js';

export const ACCOUNTS_USAGE = `filehaven accounts create --login L --password W [--name N] [--email E] [--premium-days D] [--traffic BYTES] [--json]
filehaven accounts list [--json]
filehaven accounts premium --login L [--days D] [--traffic BYTES]`;

const days = (raw: string) => (/^\d+(\.\d+)?$/.test(raw) ? Number(raw) : null);

function describe(account: Account, now: number) {
  return {
    id: account.id,
    login: account.login,
    name: account.name,
    email: account.email,
    operator: account.isOperator,
    disabled: account.disabled,
    premium: premiumState(account, now),
    premiumStart: sqlDateTime(account.premiumStart) || null,
    premiumEnd: sqlDateTime(account.premiumEnd) || null,
    trafficLeft: account.trafficLeft,
  };
}

/** `filehaven accounts ...` */
export async function accountsCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, settings } = parseCommandArgs(rest, {
    login: { type: 'string' },
    password: { type: 'string' },
    name: { type: 'string' },
    email: { type: 'string' },
    'premium-days': { type: 'string' },
    days: { type: 'string' },
    traffic: { type: 'string' },
    json: { type: 'boolean' },
  });
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
        const account = await services.accounts.create(input);
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
        const account = await services.accounts.extendPremium(login, addDays, traffic);
        const d = describe(account, services.clock());
        console.log(`${d.login}: premium ${d.premium} until ${d.premiumEnd ?? '-'}, traffic left ${d.trafficLeft} bytes`);
      });
      return;
    }
    default:
      throw new UsageError(sub ? `unknown accounts command "${sub}"` : 'accounts needs a command');
  }
}
