/**
 * Bounds of what an operator may grant an account (issue 12), the same for the CLI, the
 * services and any later form: a premium period ends at most 100 years from now, and an
 * account holds at most 1 PiB of traffic. Beyond them a typo (`--premium-days 99999999`)
 * once wrote dates no page could show.
 */
export const MAX_PREMIUM_DAYS = 36_500;

/** The most traffic an account can hold, in bytes (1 PiB). */
export const MAX_TRAFFIC_BYTES = 2 ** 50;

/** MAX_TRAFFIC_BYTES as messages write it. */
export const MAX_TRAFFIC_TEXT = '1 PiB';
