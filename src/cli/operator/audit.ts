import { sqlDateTime } from '../../domain/dates.js';
import { parseCommandArgs } from '../args.js';
import { columns } from '../client/display.js';
import { countFlag, noPositionals, RANGES } from '../flags.js';
import { humanDateOrDash } from '../format.js';
import { optionsFor } from '../help.js';
import { withServices } from '../with-services.js';

/** `filehaven audit`: the audit log of operator actions, newest first. */
export async function auditCommand(args: string[]): Promise<void> {
  const { positionals, values, settings } = parseCommandArgs(args, optionsFor('audit'));
  noPositionals(positionals, 'audit');
  const limit = countFlag(values, 'limit', RANGES.operatorLimit);
  const action = typeof values.action === 'string' ? values.action : undefined;
  await withServices(settings, async (services) => {
    const entries = await services.audit.list({ limit, action });
    if (values.json) {
      return console.log(JSON.stringify(entries.map((e) => ({ ...e, at: sqlDateTime(e.at) }))));
    }
    if (entries.length === 0) return console.log('no audit entries');
    const rows = entries.map((e) => [humanDateOrDash(e.at), e.actor, e.action, e.object, e.details || '-']);
    console.log(columns([['AT (UTC)', 'ACTOR', 'ACTION', 'OBJECT', 'DETAILS'], ...rows]));
  });
}
