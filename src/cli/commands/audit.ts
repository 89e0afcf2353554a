import { sqlDateTime } from '../../domain/dates.js';
import { parseCommandArgs } from '../args.js';
import { limitFlag, noPositionals } from '../flags.js';
import { humanDateOrDash } from '../format.js';
import { withServices } from '../with-services.js';

export const AUDIT_USAGE = 'filehaven audit [--limit N] [--action PREFIX] [--json]    operator actions, newest first';

/** `filehaven audit`: the audit log of operator actions, newest first. */
export async function auditCommand(args: string[]): Promise<void> {
  const { positionals, values, settings } = parseCommandArgs(args, {
    limit: { type: 'string' },
    action: { type: 'string' },
    json: { type: 'boolean' },
  });
  noPositionals(positionals, 'audit');
  const limit = limitFlag(values, 'limit', 50);
  const action = typeof values.action === 'string' ? values.action : undefined;
  await withServices(settings, async (services) => {
    const entries = await services.audit.list({ limit, action });
    if (values.json) {
      return console.log(JSON.stringify(entries.map((e) => ({ ...e, at: sqlDateTime(e.at) }))));
    }
    console.log(['AT', 'ACTOR', 'ACTION', 'OBJECT', 'DETAILS'].join('\t'));
    for (const e of entries) console.log([humanDateOrDash(e.at), e.actor, e.action, e.object, e.details || '-'].join('\t'));
  });
}
