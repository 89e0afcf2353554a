/** Balances are whole cents (API.md 5: "a decimal with two places"). */

// 13 digits of units keep every amount, and every sum of two, a safe integer of cents.
const UNIT_DIGITS = 13;
const AMOUNT = new RegExp(`^([+-]?)(\\d{1,${UNIT_DIGITS}})(?:\\.(\\d{1,2}))?$`);

/** The largest amount parseMoney reads, in cents (9999999999999.99). */
export const MAX_AMOUNT_CENTS = 10 ** (UNIT_DIGITS + 2) - 1;

/** `12.50`, `-3`, `0.5` → cents; null for anything else (`1e3`, `12.505`, `1,50`, ``). */
export function parseMoney(raw: string): number | null {
  const match = AMOUNT.exec(raw.trim());
  if (!match) return null;
  const cents = Number(match[2]) * 100 + Number((match[3] ?? '').padEnd(2, '0'));
  return match[1] === '-' && cents !== 0 ? -cents : cents;
}

/** Cents as a decimal with two places (`12.50`, `-3.00`). */
export function money(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
