import { parseBytes } from '../config/units.js';
import { parseMoney } from '../domain/money.js';
import { type ParsedArgs, UsageError } from './args.js';

/** A number of days (`30`, `1.5`, and with `negative` also `-10`), or undefined when absent. */
export function daysFlag(values: ParsedArgs['values'], name: string, negative = false): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !(negative ? /^-?\d+(\.\d+)?$/ : /^\d+(\.\d+)?$/).test(raw)) {
    throw new UsageError(`--${name} expects a number of days such as 30${negative ? ' or -10' : ''}, got "${String(raw)}"`);
  }
  return Number(raw);
}

/** A size flag (`500MB`, `2GiB`, `1048576`) in bytes, or undefined when absent. */
export function sizeFlag(values: ParsedArgs['values'], name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const bytes = typeof raw === 'string' ? parseBytes(raw) : null;
  if (bytes === null) throw new UsageError(`--${name} expects a size such as 500MB or 2GiB, got "${String(raw)}"`);
  return bytes;
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

/** A `--limit`-style flag: a whole number from 1 to `max`, or `fallback` when absent. */
export function limitFlag(values: ParsedArgs['values'], name: string, fallback: number, max = 10_000): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new UsageError(`--${name} expects a whole number from 1 to ${max}, got "${String(raw)}"`);
  }
  return Number(raw);
}

/** An amount flag (`12.50`, `-3.00`) in cents, or undefined when absent. */
export function moneyFlag(values: ParsedArgs['values'], name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const cents = typeof raw === 'string' ? parseMoney(raw) : null;
  if (cents === null) throw new UsageError(`--${name} expects an amount with at most two decimals such as 12.50 or -3.00, got "${String(raw)}"`);
  return cents;
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
