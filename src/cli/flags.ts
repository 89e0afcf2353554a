import { parseMoney } from '../domain/money.js';
import { UsageError, type ParsedArgs } from './args.js';

/**
 * parseArgs refuses `--add -3.00` as ambiguous; turns such a pair into `--add=-3.00` for
 * the named flags when the value looks like a negative number.
 */
export function joinNegativeValues(args: string[], flags: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    if (flags.includes(arg.replace(/^--/, '')) && arg.startsWith('--') && next !== undefined && /^-[\d.]/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
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
