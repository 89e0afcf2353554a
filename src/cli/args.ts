import { type ParseArgsConfig, parseArgs } from 'node:util';
import { CONFIG_FILE_FLAG, refusedSettingFlag, SETTINGS } from '../config/config.js';

/** A mistake in how a command was called; printed with the usage hint. */
export class UsageError extends Error {
  override name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Every command accepts the configuration flags (`--data`, `--port`, ...). */
const SETTING_OPTIONS: Options = Object.fromEntries([...SETTINGS.map((s) => s.flag), CONFIG_FILE_FLAG].map((flag) => [flag, { type: 'string' as const }]));

export interface ParsedArgs {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
  /** The configuration flags only, for loadConfig. */
  settings: Record<string, string | undefined>;
}

/**
 * parseArgs refuses `--days -10` as ambiguous (the value looks like a flag); a value flag
 * followed by a negative number becomes `--days=-10`, so negative numbers work wherever
 * they make sense and get the flag's own message where they do not.
 */
export function joinNegativeValues(args: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return [...out, ...args.slice(i)];
    const next = args[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : null;
    if (name !== null && options[name]?.type === 'string' && next !== undefined && /^-\.?\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** parseArgs with the options given, strictly; its errors as UsageErrors without its prefix. */
export function parseStrict(args: string[], options: Options) {
  try {
    return parseArgs({ args: joinNegativeValues(args, options), options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseArgsMessage(error as Error));
  }
}

/** parseArgs' error in one short line. */
function parseArgsMessage(error: Error): string {
  const message = error.message;
  const flag = /'(--?[^' ]+)/.exec(message)?.[1] ?? '';
  if (/^Unknown option/.test(message)) return `unknown flag ${flag}`;
  if (/argument missing/.test(message)) return `${flag} needs a value`;
  if (/ambiguous/.test(message)) return `${flag} needs a value (write one that starts with - as ${flag}=-VALUE)`;
  if (/does not take an argument/.test(message)) return `${flag} takes no value`;
  return message.split('\n')[0]!;
}

/**
 * Parses a command's arguments strictly; unknown flags, and settings flags with a value
 * their setting does not take (`--port 70000`), are a UsageError.
 */
export function parseCommandArgs(args: string[], options: Options = {}): ParsedArgs {
  const parsed = parseStrict(args, { ...SETTING_OPTIONS, ...options });
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const settings: Record<string, string | undefined> = {};
  for (const flag of [...SETTINGS.map((s) => s.flag), CONFIG_FILE_FLAG]) {
    const value = values[flag];
    if (typeof value === 'string') settings[flag] = value;
  }
  const refused = refusedSettingFlag(settings);
  if (refused !== null) throw new UsageError(refused);
  return { positionals: parsed.positionals, values, settings };
}

/** A required string flag. */
export function required(values: ParsedArgs['values'], name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}
