import { humanDateOrDash } from '../format.js';
import { parseCommandArgs, UsageError } from '../args.js';
import { withServices } from '../with-services.js';

export const FILES_USAGE = 'filehaven files block|unblock|delete <file_id>';
export const BLACKLIST_USAGE = 'filehaven blacklist add|remove <sha256> [--reason TEXT] | blacklist list';

/** `filehaven files block|unblock|delete <id>` */
export async function filesCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { positionals, settings } = parseCommandArgs(rest);
  const id = positionals[0];
  if (!sub || !['block', 'unblock', 'delete'].includes(sub)) throw new UsageError(sub ? `unknown files command "${sub}"` : 'files needs a command');
  if (!id || positionals.length > 1) throw new UsageError(`files ${sub} takes exactly one file id`);
  await withServices(settings, async (services) => {
    const action = { block: services.files.block, unblock: services.files.unblock, delete: services.files.operatorDelete }[sub as 'block' | 'unblock' | 'delete'];
    const file = await action.call(services.files, id);
    const state = { A: 'active', B: 'blocked', D: 'deleted' }[file.status];
    console.log(`file ${file.id} "${file.name}" is now ${state} (${file.status})`);
  });
}

/** `filehaven blacklist add|remove|list` */
export async function blacklistCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { positionals, values, settings } = parseCommandArgs(rest, { reason: { type: 'string' } });
  await withServices(settings, async (services) => {
    switch (sub) {
      case 'add':
      case 'remove': {
        const digest = positionals[0];
        if (!digest || positionals.length > 1) throw new UsageError(`blacklist ${sub} takes exactly one sha256`);
        if (sub === 'add') await services.files.blacklistAdd(digest, (values.reason as string | undefined) ?? '');
        else await services.files.blacklistRemove(digest);
        console.log(`${sub === 'add' ? 'added' : 'removed'} ${digest.toLowerCase()}`);
        return;
      }
      case 'list':
        for (const entry of await services.files.blacklist()) {
          console.log([entry.sha256, humanDateOrDash(entry.createdAt), entry.reason].join('\t'));
        }
        return;
      default:
        throw new UsageError(sub ? `unknown blacklist command "${sub}"` : 'blacklist needs a command');
    }
  });
}
