import { parseBytes, parseDuration } from '../config/units.js';
import { MAX_PREMIUM_DAYS, MAX_TRAFFIC_BYTES, MAX_TRAFFIC_TEXT } from '../domain/account-bounds.js';
import { LONGEST_EXPIRY_SECONDS } from '../domain/expiry.js';
import { MAX_AMOUNT_CENTS, money, parseMoney } from '../domain/money.js';
import { type ParsedArgs, UsageError } from './args.js';

/**
 * The values a numeric flag takes. The help (help.ts) and the parser below read the same
 * one, and a refused value is answered with it (issue 23: "--premium-days takes 0 to
 * 36500 days, got "-5""), never only with an example.
 */
export interface NumberRange {
  /** The smallest value: days, bytes, cents or a count, as the flag's parser reads it. */
  min: number;
  /** The largest value. */
  max: number;
  /** The range as people read it: `0 to 36500 days`, `a size from 0 to 1 PiB`. */
  text: string;
  /** What an absent flag means, for flags that have a default. */
  fallback?: number;
}

const wholeNumbers = (min: number, max: number, fallback: number): NumberRange & { fallback: number } => ({
  min,
  max,
  text: `a whole number from ${min} to ${max}`,
  fallback,
});

/**
 * Every numeric flag's range. Those of what an operator grants an account come from the
 * service layer's bounds (domain/account-bounds.ts), which the services enforce again.
 */
export const RANGES = {
  /** `accounts create --premium-days`. */
  premiumDays: { min: 0, max: MAX_PREMIUM_DAYS, text: `0 to ${MAX_PREMIUM_DAYS} days` },
  /** `accounts premium --days`: negative shortens. */
  premiumChange: { min: -MAX_PREMIUM_DAYS, max: MAX_PREMIUM_DAYS, text: `-${MAX_PREMIUM_DAYS} to ${MAX_PREMIUM_DAYS} days` },
  /** `accounts create --traffic`, `accounts premium --traffic`. */
  traffic: { min: 0, max: MAX_TRAFFIC_BYTES, text: `a size from 0 to ${MAX_TRAFFIC_TEXT}` },
  /** `accounts balance --set`: a balance is never below 0.00. */
  balance: { min: 0, max: MAX_AMOUNT_CENTS, text: `an amount from 0.00 to ${money(MAX_AMOUNT_CENTS)}` },
  /** `accounts balance --add`: negative takes. */
  balanceChange: { min: -MAX_AMOUNT_CENTS, max: MAX_AMOUNT_CENTS, text: `an amount from ${money(-MAX_AMOUNT_CENTS)} to ${money(MAX_AMOUNT_CENTS)}` },
  /** `files list --limit`, `audit --limit`. */
  operatorLimit: wholeNumbers(1, 10_000, 50),
  /** `ls --limit`. */
  lsLimit: wholeNumbers(1, 100_000, 1000),
  /** `upload --parallel`. */
  parallel: wholeNumbers(1, 8, 2),
  /** `upload --connections`: the SDK's UploadOptions.connections (MAX_UPLOAD_CONNECTIONS). */
  connections: wholeNumbers(1, 16, 4),
  /** `upload --chunk-size`: the server's Filehaven-Max-Chunk-Size caps it too. */
  chunkSize: { min: 64 * 1024, max: 4 * 1024 ** 3, text: 'a size from 64KiB to 4GiB' },
  /** `share --expires`, `request --expires`, `upload --expires`, `expire`: in seconds (issue 25). */
  expires: { min: 1, max: LONGEST_EXPIRY_SECONDS, text: 'a duration from 1s to 100 years (36500d)' },
  /** `share --max-downloads`, `request --max-files`. */
  linkCount: { min: 1, max: 1_000_000_000, text: 'a whole number from 1 to 1000000000' },
  /** `request --max-bytes`, `request --max-file-size`. */
  linkBytes: { min: 1, max: 1024 ** 5, text: 'a size from 1 byte to 1PiB' },
} satisfies Record<string, NumberRange>;

/** The refusal of `raw` as a value of `--name`: the range it takes and what it got. */
function outOfRange(name: string, range: NumberRange, raw: unknown, example: string): UsageError {
  return new UsageError(`--${name} takes ${range.text} (such as ${example}), got "${String(raw)}"`);
}

const within = (value: number, range: NumberRange) => value >= range.min && value <= range.max;

/** A number of days (`30`, `1.5`, and where the range allows, `-10`) within `range`, or undefined when absent. */
export function daysFlag(values: ParsedArgs['values'], name: string, range: NumberRange): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^-?\d+(\.\d+)?$/.test(raw) || !within(Number(raw), range)) {
    throw outOfRange(name, range, raw, range.min < 0 ? '30 or -10' : '30 or 0.5');
  }
  return Number(raw);
}

/** A size flag (`500MB`, `2GiB`, `1048576`) in bytes within `range`, or undefined when absent. */
export function sizeFlag(values: ParsedArgs['values'], name: string, range: NumberRange): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const bytes = typeof raw === 'string' ? parseBytes(raw) : null;
  if (bytes === null || !within(bytes, range)) throw outOfRange(name, range, raw, '500MB or 2GiB');
  return bytes;
}

/**
 * A duration (`7d`, `12h`, `30m`, `90s`; a bare number is seconds) in whole seconds
 * within `range`, or undefined when absent.
 */
export function durationFlag(values: ParsedArgs['values'], name: string, range: NumberRange): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const seconds = typeof raw === 'string' ? durationSeconds(raw) : null;
  if (seconds === null || !within(seconds, range)) throw outOfRange(name, range, raw, '7d, 12h or 30m');
  return seconds;
}

/** A duration as whole seconds; null when unreadable or not a whole number of seconds (`1500ms`). */
export function durationSeconds(text: string): number | null {
  const ms = parseDuration(text);
  return ms === null || ms % 1000 !== 0 ? null : ms / 1000;
}

/** An optional whole-number flag (`--max-downloads`) within `range`, or undefined when absent. */
export function optionalCountFlag(values: ParsedArgs['values'], name: string, range: NumberRange): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || !within(Number(raw), range)) throw outOfRange(name, range, raw, String(Math.max(range.min, 5)));
  return Number(raw);
}

/** A whole-number flag (`--limit`, `--parallel`) within `range`, or its fallback when absent. */
export function countFlag(values: ParsedArgs['values'], name: string, range: NumberRange & { fallback: number }): number {
  const raw = values[name];
  if (raw === undefined) return range.fallback;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || !within(Number(raw), range)) throw outOfRange(name, range, raw, String(range.fallback));
  return Number(raw);
}

/** An amount flag (`12.50`, `-3.00`: at most two decimals) in cents within `range`, or undefined when absent. */
export function moneyFlag(values: ParsedArgs['values'], name: string, range: NumberRange): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const cents = typeof raw === 'string' ? parseMoney(raw) : null;
  if (cents === null || !within(cents, range)) throw outOfRange(name, range, raw, range.min < 0 ? '12.50 or -3.00' : '12.50');
  return cents;
}

/**
 * The password of `--password W` or `--password-stdin` (the first line of standard input,
 * so it stays out of `ps` and the shell's history); exactly one of them.
 */
export async function passwordFlag(values: ParsedArgs['values']): Promise<string> {
  const fromStdin = values['password-stdin'] === true;
  if (fromStdin && values.password !== undefined) throw new UsageError('give --password or --password-stdin, not both');
  if (!fromStdin) {
    if (typeof values.password !== 'string' || values.password === '') throw new UsageError('--password W or --password-stdin is required');
    return values.password;
  }
  const password = await firstLineOfStdin();
  if (password === '') throw new UsageError('--password-stdin: no password on standard input');
  return password;
}

/** The first line of standard input, without its line break ('' when there is none). */
export async function firstLineOfStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += (chunk as Buffer).toString('utf8');
    if (text.includes('\n')) break;
  }
  // Stop reading: the rest of stdin is not ours, and a paused stream lets the process end.
  process.stdin.pause();
  return text.split('\n')[0]!.replace(/\r$/, '');
}

/** `--reason`: one line of at most 255 characters (it is printed in tab-separated lists). */
export function reasonFlag(values: ParsedArgs['values']): string {
  const raw = values.reason;
  if (typeof raw !== 'string') return '';
  const reason = raw.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  if (reason.length > 255) throw new UsageError('--reason must be at most 255 characters');
  return reason;
}

/** The single positional argument a command takes (a file id, a digest, a pattern). */
export function onePositional(positionals: string[], command: string, what: string): string {
  if (positionals.length !== 1 || positionals[0] === '') {
    const hint = positionals.length > 1 && what.includes('pattern') ? ' (quote the pattern so the shell does not expand it)' : '';
    throw new UsageError(`${command} takes exactly one ${what}${hint}`);
  }
  return positionals[0]!;
}

/** Refuses positional arguments for commands that take flags only. */
export function noPositionals(positionals: string[], command: string): void {
  if (positionals.length > 0) throw new UsageError(`${command} takes no arguments besides flags, got "${positionals[0]}"`);
}
