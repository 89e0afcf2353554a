import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CONFIG_FILE_FLAG, SETTINGS } from '../config/config.js';

/** A mistake in how a command was called; printed with the usage hint. */
export class UsageError extends Error {
  override name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Every command accepts the configuration flags (`--data`, `--port`, ...). */
const SETTING_OPTIONS: Options = Object.fromEntries(
  [...SETTINGS.map((s) => s.flag), CONFIG_FILE_FLAG].map((flag) => [flag, { type: 'string' as const }]),
);

export interface ParsedArgs {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
  /** The configuration flags only, for loadConfig. */
  settings: Record<string, string | undefined>;
}

/** Parses a command's arguments strictly; unknown flags are a UsageError. */
export function parseCommandArgs(args: string[], options: Options = {}): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...SETTING_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/^.*?: /, ''));
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const settings: Record<string, string | undefined> = {};
  for (const flag of [...SETTINGS.map((s) => s.flag), CONFIG_FILE_FLAG]) {
    const value = values[flag];
    if (typeof value === 'string') settings[flag] = value;
  }
  return { positionals: parsed.positionals, values, settings };
}

/** A required string flag. */
export function required(values: ParsedArgs['values'], name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** An optional non-negative number flag. */
export function optionalNumber(values: ParsedArgs['values'], name: string, parse: (raw: string) => number | null): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  const parsed = typeof value === 'string' ? parse(value) : null;
  if (parsed === null || !Number.isFinite(parsed) || parsed < 0) throw new UsageError(`--${name} expects a number >= 0, got "${value}"`);
  return parsed;
}
