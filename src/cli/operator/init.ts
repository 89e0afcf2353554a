import { openServices } from '../../composition.js';
import { type Config, loadConfig } from '../../config/config.js';
import { redactUrl } from '../../config/redact-url.js';
import { SQLITE_FILE } from '../../db/dialect.js';
import { parseCommandArgs } from '../args.js';
import { printFirstOperator } from '../first-operator.js';
import { noPositionals } from '../flags.js';
import { optionsFor } from '../help.js';

/**
 * `filehaven init` (issue 23): sets a site up as `serve`'s first start would, without
 * serving it, so configuration management and container builds can create accounts
 * before the first start. The same settings and the same steps as serve
 * (composition.ts openServices): the data folder (mode 0700) and its secret unless --secret
 * is given, the database (SQLite in the folder, or the PostgreSQL schema, migrated), the
 * secret's fingerprint, the blob store checked (the folder, or a HeadBucket); then the
 * operator account `admin`, its password printed once. serve then finds an account and
 * creates none. A site that has accounts already is left as it is, and said so (exit 0):
 * running init before every start is safe.
 */
export async function initCommand(args: string[]): Promise<void> {
  const { settings, positionals } = parseCommandArgs(args, optionsFor('init'));
  noPositionals(positionals, 'init');
  const config = loadConfig(settings, process.env);
  const services = await openServices(config, { log: (error, message) => console.error(message, (error as Error).message) });
  try {
    // serve's rule (server.ts): the operator comes with the first account of a site, and
    // createFirstOperator is null when another process (a serve, an init) made it first.
    const operator = (await services.accounts.hasNoAccounts()) ? await services.accounts.createFirstOperator() : null;
    if (operator === null) {
      console.log(`already initialised: ${siteOf(config)}; nothing changed`);
      return;
    }
    printFirstOperator(operator);
    console.log(`initialised ${siteOf(config)}`);
  } finally {
    await services.close();
  }
}

/** Where the site lives, in one line (the database URL without its password). */
function siteOf(config: Config): string {
  const metadata =
    config.databaseUrl === null ? `SQLite ${config.dataDir}/${SQLITE_FILE}` : `PostgreSQL ${redactUrl(config.databaseUrl)} (schema ${config.databaseSchema})`;
  const blobs =
    config.s3Bucket === null ? `blobs in ${config.dataDir}` : `blobs in S3 bucket ${config.s3Bucket}${config.s3Prefix ? ` (prefix ${config.s3Prefix})` : ''}`;
  const secret = config.secret === null ? `secret in ${config.dataDir}/secret` : 'secret from --secret (FILEHAVEN_SECRET)';
  return `${metadata}, ${blobs}, ${secret}`;
}
