import { createRequire } from 'node:module';
import type * as RateLimiterFlexible from 'rate-limiter-flexible';

// The two classes the limits use, from their own files: the package's index loads every
// store it ships (Redis, Mongo, DynamoDB, Prisma, ...), about 9 MB of resident memory for
// code a server never runs (issue 9: idle RSS). The types are the package's own.
const require = createRequire(import.meta.url);

export const RateLimiterMemory: typeof RateLimiterFlexible.RateLimiterMemory = require('rate-limiter-flexible/lib/RateLimiterMemory.js');
export const RateLimiterRes: typeof RateLimiterFlexible.RateLimiterRes = require('rate-limiter-flexible/lib/RateLimiterRes.js');
/** Used only with --redis-url; it loads no Redis client of its own (the connection is given). */
export const RateLimiterRedis: typeof RateLimiterFlexible.RateLimiterRedis = require('rate-limiter-flexible/lib/RateLimiterRedis.js');
export type RateLimiterRes = RateLimiterFlexible.RateLimiterRes;
export type { RateLimiterAbstract } from 'rate-limiter-flexible';
